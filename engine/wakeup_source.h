// WakeupSource: something a progress thread can sleep on instead of spinning
// over a polling task (UCX's worker event fd, in the PIOMan paper's terms the
// "blocking call" trigger).
//
// A polling task stays queued and reports kIdle while its network is quiet,
// so a progress thread that sees only such tasks cannot sleep on the queue
// tree. When every registered source arms successfully, it sleeps in poll()
// on the sources' fds and its own wake-up eventfd instead: an incoming
// message (fd readable), a Submit or an Engine::Notify() wakes it.
//
// Thread-safety: Arm() is called by progress threads, one at a time per
// source (under the engine's registry lock); fd() must not change.
#ifndef RONDO_ENGINE_WAKEUP_SOURCE_H_
#define RONDO_ENGINE_WAKEUP_SOURCE_H_

#include <mutex>
#include <vector>

namespace rondo::engine {

class WakeupSource {
 public:
  virtual ~WakeupSource() = default;
  virtual int fd() const noexcept = 0;
  // true: armed, the fd will become readable on the next event; false:
  // events are pending or the source is busy: poll instead of sleeping.
  virtual bool Arm() noexcept = 0;
};

// The engine's list of sources, shared with its progress threads.
struct WakeupRegistry {
  std::mutex mu;
  std::vector<WakeupSource*> sources;
};

}  // namespace rondo::engine

#endif  // RONDO_ENGINE_WAKEUP_SOURCE_H_
