/* STARPU_CALL_UNCHECKED(call): runs a StarPU call with LeakSanitizer off.
 *
 * StarPU 1.3.10 keeps about 1 KiB allocated in starpu_init by a module it
 * unloads again (LeakSanitizer cannot name it, so no suppression in
 * lsan_starpu.supp matches it): the allocations StarPU makes inside
 * starpu_init / rondo_starpu_init_all / starpu_shutdown are not
 * leak-checked; Rondo's and the program's are. Without ASan it is the call
 * itself. For programs over rondo_starpu (tests, benchmarks). */
#ifndef RONDO_NMAD_STARPU_STARPU_UNCHECKED_H_
#define RONDO_NMAD_STARPU_STARPU_UNCHECKED_H_

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define STARPU_CALL_UNCHECKED(call) \
  (__lsan_disable(), __extension__({ int r_ = (call); __lsan_enable(); r_; }))
#else
#define STARPU_CALL_UNCHECKED(call) (call)
#endif

#endif /* RONDO_NMAD_STARPU_STARPU_UNCHECKED_H_ */
