#include "drivers/shm/fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rondo::drivers::shm {
namespace {

long Membarrier(int cmd) noexcept {
  return syscall(__NR_membarrier, cmd, 0u, 0);
}

}  // namespace

bool RegisterHeavyBarrier() noexcept {
  // Once per process: registration is process-wide and stays.
  static const bool registered = [] {
    const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
    constexpr long kNeed = MEMBARRIER_CMD_GLOBAL_EXPEDITED |
                           MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    if (cmds < 0 || (cmds & kNeed) != kNeed) return false;
    return Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  }();
  return registered;
}

bool HeavyBarrier() noexcept {
  return Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace rondo::drivers::shm
