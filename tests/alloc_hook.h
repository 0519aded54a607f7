/* alloc_hook: calls a function on every heap allocation of the process
 * (malloc, calloc, realloc, the aligned forms, and operator new, which
 * calls malloc), in plain builds and under AddressSanitizer alike.
 *
 * Why: the zero-allocation tests (issue 17) must count the same
 * allocations in CI's ASan build as in a plain one, so that they need no
 * plain build of their own (docs/testing.md).
 *   - Plain build: linking //tests:alloc_hook replaces malloc and friends
 *     with thin wrappers over glibc's __libc_* functions that call the hook
 *     before allocating.
 *   - AddressSanitizer (__SANITIZE_ADDRESS__, __has_feature): ASan owns
 *     malloc, nothing is replaced; the hook is installed into its allocator
 *     (__sanitizer_install_malloc_and_free_hooks), which calls it after
 *     every allocation it serves, operator new and realloc included.
 *   - ThreadSanitizer: off (rondo_alloc_hook_set returns 0). Its allocator
 *     skips the hooks while its interceptors are ignored (inside the
 *     dynamic loader, for one), so its counts would not be the plain
 *     build's.
 *
 * The hook runs on the allocating thread, inside the allocation: it must
 * not allocate without guarding against its own recursion.
 *
 * Thread-safety: rondo_alloc_hook_set may be called from any thread; the
 * hook pointer is an atomic, each allocation sees the last one set. */
#ifndef RONDO_TESTS_ALLOC_HOOK_H_
#define RONDO_TESTS_ALLOC_HOOK_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*RondoAllocHook)(void);

/* Sets the function called on every allocation (NULL: none). Returns 1
 * when this build sees allocations, 0 when it does not (ThreadSanitizer),
 * in which case the hook is never called. */
int rondo_alloc_hook_set(RondoAllocHook hook);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* RONDO_TESTS_ALLOC_HOOK_H_ */
