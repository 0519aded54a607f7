/* The C API from C: init from the environment, task init/submit/wait,
 * repeat tasks driven by the idle hook, bad input, finalize. Exits non-zero
 * with a message on the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rondo_engine.h"

static int failures = 0;
#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                \
      ++failures;                                                    \
    }                                                                \
  } while (0)

static int count_once(void* arg) {
  ++*(int*)arg;
  return RONDO_TASK_DONE;
}

static int count_to_ten(void* arg) {
  return ++*(int*)arg >= 10 ? RONDO_TASK_DONE : RONDO_TASK_IDLE;
}

int main(void) {
  /* A quiet engine on a synthetic machine: only this thread runs tasks. */
  setenv("RONDO_TOPOLOGY", "synthetic:core:2 pu:1", 1);
  setenv("RONDO_PROGRESS", "none", 1);
  setenv("RONDO_TIMER_US", "0", 1);

  rondo_task_t task;
  int counter = 0;
  int core0 = 0;
  CHECK(rondo_task_init(&task, count_once, &counter, &core0, 1, 0, "c") ==
        RONDO_OK);
  CHECK(rondo_task_submit(&task) == RONDO_ERR_NOT_INITIALIZED);

  CHECK(rondo_engine_init() == RONDO_OK);
  CHECK(rondo_engine_init() == RONDO_ERR_BUSY);
  CHECK(rondo_engine_initialized() == 1);
  CHECK(rondo_engine_num_cores() == 2);

  CHECK(rondo_task_submit(&task) == RONDO_OK);
  CHECK(rondo_task_test(&task) == 0);
  CHECK(rondo_task_submit(&task) == RONDO_ERR_BUSY);
  CHECK(strstr(rondo_engine_last_error(), "already queued") != NULL);
  CHECK(rondo_engine_run_once(0) == 1);
  CHECK(rondo_task_test(&task) == 1);
  CHECK(rondo_task_wait(&task) == RONDO_OK);
  CHECK(counter == 1);
  CHECK(rondo_task_last_core(&task) == 0);

  /* A repeat task pinned to core 1, driven by a runtime's idle hook. */
  rondo_task_t poll;
  int polls = 0;
  int core1 = 1;
  CHECK(rondo_task_init(&poll, count_to_ten, &polls, &core1, 1,
                        RONDO_TASK_REPEAT, "poll") == RONDO_OK);
  CHECK(rondo_task_submit(&poll) == RONDO_OK);
  int passes = 0;
  while (!rondo_task_test(&poll) && passes < 100) {
    CHECK(rondo_engine_run_once(1) >= 0);
    ++passes;
  }
  CHECK(polls == 10);
  CHECK(passes == 10);

  /* Bad input. */
  int core5 = 5;
  rondo_task_t bad;
  CHECK(rondo_task_init(&bad, count_once, &counter, &core5, 1, 0, NULL) ==
        RONDO_OK);
  CHECK(rondo_task_submit(&bad) == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_engine_last_error(), "core 5") != NULL);
  CHECK(rondo_task_init(&bad, count_once, &counter, &core0, 0, 0, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_task_init(&bad, NULL, &counter, &core0, 1, 0, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_task_init(&bad, count_once, &counter, &core0, 1, 8, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_engine_run_once(2) == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(rondo_strerror(RONDO_ERR_CANCELED), "canceled") == 0);

  /* Finalize cancels what is still queued. */
  rondo_task_t left;
  CHECK(rondo_task_init(&left, count_once, &counter, &core1, 1, 0, NULL) ==
        RONDO_OK);
  CHECK(rondo_task_submit(&left) == RONDO_OK);
  CHECK(rondo_engine_finalize() == RONDO_OK);
  CHECK(rondo_task_test(&left) == 1);
  CHECK(counter == 1);
  CHECK(rondo_engine_finalize() == RONDO_ERR_NOT_INITIALIZED);

  /* Background count and traces: off without RONDO_TRACE; with it, an
   * application span lands in the trace beside the tasks. */
  CHECK(rondo_engine_background() == RONDO_ERR_NOT_INITIALIZED);
  CHECK(rondo_engine_current_core() == RONDO_ERR_NOT_INITIALIZED);
  CHECK(rondo_trace_span("kernel", 1, 2) == RONDO_ERR_NOT_INITIALIZED);
  CHECK(rondo_engine_init() == RONDO_OK);
  CHECK(rondo_engine_background() == 0);
  CHECK(rondo_engine_current_core() >= 0 && rondo_engine_current_core() < 2);
  CHECK(rondo_trace_enabled() == 0);
  CHECK(rondo_trace_span("kernel", 1, 2) == RONDO_OK);
  CHECK(rondo_trace_span(NULL, 1, 2) == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_trace_span("kernel", 5, 2) == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_engine_finalize() == RONDO_OK);
  const char* dir = getenv("TEST_TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/c_api_trace.json", dir ? dir : "/tmp");
  setenv("RONDO_TRACE", path, 1);
  CHECK(rondo_engine_init() == RONDO_OK);
  CHECK(rondo_trace_enabled() == 1);
  const long long t0 = rondo_trace_now_ns();
  const long long t1 = rondo_trace_now_ns();
  CHECK(t1 >= t0 && t0 > 0);
  CHECK(rondo_trace_span("dgemm_kernel", t0, t1 + 1000) == RONDO_OK);
  CHECK(rondo_engine_finalize() == RONDO_OK);
  unsetenv("RONDO_TRACE");
  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  if (f != NULL) {
    static char text[1 << 16];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    CHECK(strstr(text, "\"dgemm_kernel\"") != NULL);
    CHECK(strstr(text, "\"cat\":\"app\"") != NULL);
  }

  /* A bad environment value is refused with the variable's name. */
  setenv("RONDO_QUEUE", "fast", 1);
  CHECK(rondo_engine_init() == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_engine_last_error(), "RONDO_QUEUE") != NULL);
  CHECK(rondo_engine_initialized() == 0);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
