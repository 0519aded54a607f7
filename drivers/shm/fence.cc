#include "drivers/shm/fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace rondo::drivers::shm {
namespace {

long Membarrier(int cmd) noexcept {
  return syscall(__NR_membarrier, cmd, 0u, 0);
}

}  // namespace

bool RegisterHeavyBarrier() noexcept {
  // Registration is per process and stays; the pid that registered is
  // kept so that a child forked afterwards registers itself (whatever the
  // kernel does with a parent's registration at fork). A refusal is not
  // kept: the next caller asks again (drivers register once, at Init).
  static std::atomic<pid_t> registered_by{0};
  const pid_t self = getpid();
  if (registered_by.load(std::memory_order_acquire) == self) return true;
  const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
  constexpr long kNeed = MEMBARRIER_CMD_GLOBAL_EXPEDITED |
                         MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
  if (cmds < 0 || (cmds & kNeed) != kNeed) return false;
  if (Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) return false;
  registered_by.store(self, std::memory_order_release);
  return true;
}

bool HeavyBarrier() noexcept {
  return Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace rondo::drivers::shm
