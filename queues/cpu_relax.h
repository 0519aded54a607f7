// CpuRelax(): the spin-wait hint (x86 `pause`, ARM `yield`), which lets the
// sibling hyperthread run and lowers the cost of leaving a spin loop.
#ifndef RONDO_QUEUES_CPU_RELAX_H_
#define RONDO_QUEUES_CPU_RELAX_H_

namespace rondo::queues {

inline void CpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

// Size of a cache line, for alignment of hot shared words.
inline constexpr int kCacheLine = 64;

}  // namespace rondo::queues

#endif  // RONDO_QUEUES_CPU_RELAX_H_
