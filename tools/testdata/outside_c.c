/* A C program outside the Bazel tree, built against an installed Rondo's C
 * API: gcc outside_c.c $(pkg-config --cflags-only-I --libs rondo) */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdio.h>
#include <stdlib.h>

#include "engine/rondo_engine.h"

static int Poll(void* arg) {
  int* polls = (int*)arg;
  return ++*polls == 5 ? RONDO_TASK_DONE : RONDO_TASK_IDLE;
}

int main(void) {
  setenv("RONDO_PROGRESS", "none", 1);
  int rc = rondo_engine_init();
  if (rc != RONDO_OK) {
    fprintf(stderr, "outside_c: init: %s (%s)\n", rondo_strerror(rc),
            rondo_engine_last_error());
    return 1;
  }
  rondo_task_t task;
  int polls = 0;
  const int cores[] = {0};
  rc = rondo_task_init(&task, Poll, &polls, cores, 1, RONDO_TASK_REPEAT, "c");
  if (rc == RONDO_OK) rc = rondo_task_submit(&task);
  if (rc == RONDO_OK) rc = rondo_task_wait(&task);
  if (rc != RONDO_OK || polls != 5) {
    fprintf(stderr, "outside_c: task: %s, %d polls\n", rondo_strerror(rc), polls);
    return 1;
  }
  printf("outside_c: %d cores, task polled %d times\n", rondo_engine_num_cores(),
         polls);
  rc = rondo_engine_finalize();
  if (rc != RONDO_OK) return 1;
  printf("outside_c: ok\n");
  return 0;
}
