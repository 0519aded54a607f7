/* alloc_hook: see alloc_hook.h. */
#include "tests/alloc_hook.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define RONDO_ALLOC_HOOK_ASAN 1
#elif defined(__SANITIZE_THREAD__)
#define RONDO_ALLOC_HOOK_OFF 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RONDO_ALLOC_HOOK_ASAN 1
#elif __has_feature(thread_sanitizer)
#define RONDO_ALLOC_HOOK_OFF 1
#endif
#endif

static _Atomic(RondoAllocHook) g_hook = NULL;

static void Call(void) {
  RondoAllocHook hook = atomic_load_explicit(&g_hook, memory_order_relaxed);
  if (hook != NULL) hook();
}

#if defined(RONDO_ALLOC_HOOK_OFF)

int rondo_alloc_hook_set(RondoAllocHook hook) {
  (void)hook;
  (void)Call;
  return 0;
}

#elif defined(RONDO_ALLOC_HOOK_ASAN)

/* sanitizer/allocator_interface.h (LLVM's; GCC 12 does not install it). */
int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void*, size_t),
    void (*free_hook)(const volatile void*));

static void OnMalloc(const volatile void* p, size_t n) {
  (void)p;
  (void)n;
  Call();
}
/* The runtime stops at the first empty free hook of its list: never NULL. */
static void OnFree(const volatile void* p) { (void)p; }

int rondo_alloc_hook_set(RondoAllocHook hook) {
  /* Installed once per process, whatever the hook: the runtime keeps at
   * most 5 and cannot remove one. */
  static atomic_flag installed = ATOMIC_FLAG_INIT;
  if (!atomic_flag_test_and_set(&installed))
    (void)__sanitizer_install_malloc_and_free_hooks(OnMalloc, OnFree);
  atomic_store_explicit(&g_hook, hook, memory_order_relaxed);
  return 1;
}

#else  /* plain: malloc and friends replaced */

int rondo_alloc_hook_set(RondoAllocHook hook) {
  atomic_store_explicit(&g_hook, hook, memory_order_relaxed);
  return 1;
}

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t n, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void* __libc_memalign(size_t align, size_t size);
extern void __libc_free(void* p);

void* malloc(size_t size) {
  Call();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  Call();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
  Call();
  return __libc_realloc(p, size);
}
void* memalign(size_t align, size_t size) {
  Call();
  return __libc_memalign(align, size);
}
void* aligned_alloc(size_t align, size_t size) {
  Call();
  return __libc_memalign(align, size);
}
int posix_memalign(void** out, size_t align, size_t size) {
  Call();
  void* p = __libc_memalign(align, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }

#endif
