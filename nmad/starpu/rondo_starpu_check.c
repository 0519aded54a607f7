/* rondo_starpu_check: rondo_starpu in a real StarPU 1.3 on 1 to 4 ranks
 * (rondo-run), asserting on values:
 *   - rondo_starpu_init before starpu_init, and twice: clear errors;
 *     rondo_starpu_init_all (StarPU on rank 0 first: its bus files);
 *   - data dependencies: a task that writes a handle, then its send, on the
 *     sender; a receive, then a task that reads the handle, on the receiver:
 *     the reader sees the writer's values (StarPU's implicit dependencies
 *     through the acquire/release of the transfer);
 *   - detection: sends of one handle to every other rank registered while
 *     its writer is held back (it reads a handle the test holds) leave as
 *     ONE dynamic broadcast
 *     (stats), received by plain receives; with detection off the same
 *     pattern sends one message per rank; rondo_starpu_bcast_handle;
 *   - completion by callback and by StarPU tag (a task declared on the tag
 *     runs after the data is there);
 *   - a handle of the wrong size on the receiving side (larger message and
 *     smaller message): RONDO_ERR_TRUNCATED in the completion, a message
 *     naming the sizes, and the task after it never runs on a cut tile;
 *   - bad arguments: NULL handle, rank out of range, negative tag, a
 *     non-contiguous matrix;
 *   - idle workers called the progression hook.
 * Rank 0 prints "rondo_starpu_check: ok (N checks)" when every rank passed. */
#define _GNU_SOURCE
#include <starpu.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmad/rondo_nmad.h"
#include "nmad/starpu/rondo_starpu.h"
#include "nmad/starpu/starpu_unchecked.h"

static int checks, failures, me = -1, n = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    ++checks;                                                           \
    if (!(cond)) {                                                      \
      ++failures;                                                       \
      printf("FAIL rank %d %s:%d: %s (last error: %s)\n", me, __FILE__, \
             __LINE__, #cond, rondo_starpu_last_error());               \
      fflush(stdout);                                                   \
    }                                                                   \
  } while (0)

enum { kLen = 1000 };

/* ---- StarPU codelets ---- */

/* buf[i] = base + i, base from cl_arg. */
static void fill_cpu(void* buffers[], void* cl_arg) {
  double* v = (double*)STARPU_VECTOR_GET_PTR(buffers[0]);
  const unsigned nx = STARPU_VECTOR_GET_NX(buffers[0]);
  double base;
  starpu_codelet_unpack_args(cl_arg, &base);
  for (unsigned i = 0; i < nx; ++i) v[i] = base + i;
}
static struct starpu_codelet fill_cl = {
    .cpu_funcs = {fill_cpu}, .nbuffers = 1, .modes = {STARPU_W},
    .name = "fill"};

/* *out = sum of buf (out: a variable handle). */
static void sum_cpu(void* buffers[], void* cl_arg) {
  (void)cl_arg;
  const double* v = (const double*)STARPU_VECTOR_GET_PTR(buffers[0]);
  const unsigned nx = STARPU_VECTOR_GET_NX(buffers[0]);
  double* out = (double*)STARPU_VARIABLE_GET_PTR(buffers[1]);
  double s = 0;
  for (unsigned i = 0; i < nx; ++i) s += v[i];
  *out = s;
}
static struct starpu_codelet sum_cl = {
    .cpu_funcs = {sum_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_W},
    .name = "sum"};

static double expected_sum(double base, int len) {
  return base * len + (double)len * (len - 1) / 2;
}

static void submit_fill(starpu_data_handle_t h, double base) {
  CHECK(starpu_task_insert(&fill_cl, STARPU_W, h, STARPU_VALUE, &base,
                           sizeof base, 0) == 0);
}

/* A fill that also reads `gate`: held back while the caller holds `gate`
 * (starpu_data_acquire W), released when it lets go. */
static void gated_fill_cpu(void* buffers[], void* cl_arg) {
  fill_cpu(buffers + 1, cl_arg);
}
static struct starpu_codelet gated_fill_cl = {
    .cpu_funcs = {gated_fill_cpu}, .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W}, .name = "gated_fill"};

static void submit_gated_fill(starpu_data_handle_t h, double base,
                              starpu_data_handle_t gate) {
  CHECK(starpu_task_insert(&gated_fill_cl, STARPU_R, gate, STARPU_W, h,
                           STARPU_VALUE, &base, sizeof base, 0) == 0);
}

/* ---- completions ---- */

struct result {
  atomic_int done;
  atomic_int status;
};
static void record(void* arg, int status) {
  struct result* r = arg;
  atomic_store(&r->status, status);
  atomic_fetch_add(&r->done, 1);
}

/* ---- the cases ---- */

/* Rank 0 fills, sends to rank 1, which sums after its receive. */
static void t_dependencies(void) {
  double* data = calloc(kLen, sizeof(double));
  double total = -1;
  starpu_data_handle_t v, s;
  starpu_vector_data_register(&v, STARPU_MAIN_RAM, (uintptr_t)data, kLen,
                              sizeof(double));
  starpu_variable_data_register(&s, STARPU_MAIN_RAM, (uintptr_t)&total,
                                sizeof total);
  struct result r = {0, 0};
  rondo_starpu_completion_t done = {record, &r, 0, 0};
  if (me == 0) {
    submit_fill(v, 7.0);
    CHECK(rondo_starpu_isend_handle(v, 1, 10, 0, &done) == RONDO_OK);
  } else if (me == 1) {
    CHECK(rondo_starpu_irecv_handle(v, 0, 10, &done) == RONDO_OK);
    CHECK(starpu_task_insert(&sum_cl, STARPU_R, v, STARPU_W, s, 0) == 0);
  }
  starpu_task_wait_for_all();
  CHECK(rondo_starpu_wait_all() == RONDO_OK);
  if (me <= 1) {
    CHECK(atomic_load(&r.done) == 1);
    CHECK(atomic_load(&r.status) == RONDO_OK);
  }
  starpu_data_unregister(v);
  starpu_data_unregister(s);
  if (me == 1) CHECK(total == expected_sum(7.0, kLen));
  free(data);
}

/* Rank 0 sends one handle to every other rank; the others receive and
 * check. `mode`: 0 detection, 1 naive, 2 explicit broadcast. */
static void t_fanout(int mode, int tag) {
  double* data = calloc(kLen, sizeof(double));
  starpu_data_handle_t v;
  starpu_vector_data_register(&v, STARPU_MAIN_RAM, (uintptr_t)data, kLen,
                              sizeof(double));
  struct result r = {0, 0};
  rondo_starpu_completion_t done = {record, &r, 0, 0};
  rondo_starpu_stats_t before, after;
  rondo_starpu_get_stats(&before);
  const double base = 100.0 * (mode + 1);
  if (me == 0) {
    CHECK(rondo_starpu_set_detection(mode == 0) == RONDO_OK);
    double gate_value = 0;
    starpu_data_handle_t gate;
    starpu_variable_data_register(&gate, STARPU_MAIN_RAM,
                                  (uintptr_t)&gate_value, sizeof gate_value);
    starpu_data_acquire(gate, STARPU_W);
    submit_gated_fill(v, base, gate);
    if (mode == 2) {
      int ranks[64];
      for (int i = 1; i < n; ++i) ranks[i - 1] = i;
      if (n > 1)
        CHECK(rondo_starpu_bcast_handle(v, ranks, NULL, n - 1, tag, &done) ==
              RONDO_OK);
    } else {
      for (int i = 1; i < n; ++i)
        CHECK(rondo_starpu_isend_handle(v, i, tag, n - i, &done) == RONDO_OK);
    }
    /* Only now may the data become ready. */
    starpu_data_release(gate);
    starpu_task_wait_for_all();
    starpu_data_unregister(gate);
  } else {
    CHECK(rondo_starpu_irecv_handle(v, 0, tag, &done) == RONDO_OK);
  }
  starpu_task_wait_for_all();
  CHECK(rondo_starpu_wait_all() == RONDO_OK);
  rondo_starpu_get_stats(&after);
  starpu_data_acquire(v, STARPU_R);
  int bad = 0;
  for (int i = 0; i < kLen; ++i) bad += data[i] != base + i;
  starpu_data_release(v);
  CHECK(bad == 0);
  if (me == 0 && n > 1) {
    const unsigned long long bcasts = after.broadcasts - before.broadcasts;
    const unsigned long long singles =
        after.single_sends - before.single_sends;
    if (mode == 1 || n == 2) {
      /* One recipient never makes a broadcast. */
      CHECK(bcasts == 0 || mode == 2);
      if (mode != 2) CHECK(singles == (unsigned long long)(n - 1));
    } else {
      CHECK(bcasts == 1);
      CHECK(after.bcast_recipients - before.bcast_recipients ==
            (unsigned long long)(n - 1));
      CHECK(singles == 0);
    }
    /* Every merged send's completion ran. */
    CHECK(atomic_load(&r.done) == (mode == 2 ? 1 : n - 1));
  } else if (me > 0) {
    CHECK(atomic_load(&r.done) == 1);
  }
  CHECK(atomic_load(&r.status) == RONDO_OK);
  starpu_data_unregister(v);
  free(data);
  if (me == 0) rondo_starpu_set_detection(1);
}

/* Completion by StarPU tag: a task declared on it runs after the data. */
static void t_tag(void) {
  if (n < 2) return;
  double* data = calloc(kLen, sizeof(double));
  double total = -1;
  starpu_data_handle_t v, s;
  starpu_vector_data_register(&v, STARPU_MAIN_RAM, (uintptr_t)data, kLen,
                              sizeof(double));
  starpu_variable_data_register(&s, STARPU_MAIN_RAM, (uintptr_t)&total,
                                sizeof total);
  if (me == 0) {
    submit_fill(v, 3.0);
    CHECK(rondo_starpu_isend_handle(v, n - 1, 20, 0, NULL) == RONDO_OK);
  } else if (me == n - 1) {
    const starpu_tag_t arrived = 5000, summed = 5001;
    rondo_starpu_completion_t done = {NULL, NULL, 1, arrived};
    CHECK(rondo_starpu_irecv_handle(v, 0, 20, &done) == RONDO_OK);
    struct starpu_task* t = starpu_task_create();
    t->cl = &sum_cl;
    t->handles[0] = v;
    t->handles[1] = s;
    t->use_tag = 1;
    t->tag_id = summed;
    starpu_tag_declare_deps(summed, 1, arrived);
    CHECK(starpu_task_submit(t) == 0);
  }
  starpu_task_wait_for_all();
  CHECK(rondo_starpu_wait_all() == RONDO_OK);
  if (me == n - 1) {
    starpu_tag_remove(5000);
    starpu_tag_remove(5001);
  }
  starpu_data_unregister(v);
  starpu_data_unregister(s);
  if (me == n - 1) CHECK(total == expected_sum(3.0, kLen));
  free(data);
}

/* Rank 0 sends kLen doubles; rank 1 receives into kLen / 2 (too small),
 * then rank 0 sends kLen / 4 into kLen (too large). Neither completes OK,
 * and the sum task after each must see the error in its status only. */
static void t_wrong_size(void) {
  if (n < 2) return;
  double* big = calloc(kLen, sizeof(double));
  double* half = calloc(kLen / 2, sizeof(double));
  starpu_data_handle_t hb, hh;
  starpu_vector_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)big, kLen,
                              sizeof(double));
  starpu_vector_data_register(&hh, STARPU_MAIN_RAM, (uintptr_t)half,
                              kLen / 2, sizeof(double));
  struct result r1 = {0, 0}, r2 = {0, 0};
  rondo_starpu_completion_t d1 = {record, &r1, 0, 0}, d2 = {record, &r2, 0, 0};
  if (me == 0) {
    submit_fill(hb, 1.0);
    submit_fill(hh, 2.0);
    CHECK(rondo_starpu_isend_handle(hb, 1, 30, 0, &d1) == RONDO_OK);
    CHECK(rondo_starpu_isend_handle(hh, 1, 31, 0, &d2) == RONDO_OK);
  } else if (me == 1) {
    CHECK(rondo_starpu_irecv_handle(hh, 0, 30, &d1) == RONDO_OK); /* small */
    CHECK(rondo_starpu_irecv_handle(hb, 0, 31, &d2) == RONDO_OK); /* large */
  }
  starpu_task_wait_for_all();
  CHECK(rondo_starpu_wait_all() == RONDO_OK);
  if (me == 1) {
    CHECK(atomic_load(&r1.status) == RONDO_ERR_TRUNCATED);
    CHECK(atomic_load(&r2.status) == RONDO_ERR_TRUNCATED);
  } else if (me == 0) {
    CHECK(atomic_load(&r1.status) == RONDO_OK);
    CHECK(atomic_load(&r2.status) == RONDO_OK);
  }
  starpu_data_unregister(hb);
  starpu_data_unregister(hh);
  free(big);
  free(half);
}

static void t_bad_args(void) {
  double x[16];
  starpu_data_handle_t v, m;
  starpu_vector_data_register(&v, STARPU_MAIN_RAM, (uintptr_t)x, 16,
                              sizeof(double));
  /* A 2 x 4 tile stored with ld 4: not contiguous. */
  starpu_matrix_data_register(&m, STARPU_MAIN_RAM, (uintptr_t)x, 4, 2, 4,
                              sizeof(double));
  CHECK(rondo_starpu_isend_handle(NULL, 0, 1, 0, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(rondo_starpu_isend_handle(v, n + 2, 1, 0, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_starpu_last_error(), "dest") != NULL);
  CHECK(rondo_starpu_irecv_handle(v, 0, -4, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_starpu_last_error(), "tag") != NULL);
  CHECK(rondo_starpu_isend_handle(m, 0, 1, 0, NULL) == RONDO_ERR_UNSUPPORTED);
  CHECK(strstr(rondo_starpu_last_error(), "ld") != NULL);
  int self = me;
  CHECK(rondo_starpu_bcast_handle(v, &self, NULL, 1, 1, NULL) ==
        RONDO_ERR_INVALID_ARGUMENT);
  starpu_data_unregister(v);
  starpu_data_unregister(m);
}

int main(void) {
  /* Before starpu_init. */
  CHECK(rondo_starpu_init() == RONDO_ERR_NOT_INITIALIZED);
  CHECK(strstr(rondo_starpu_last_error(), "starpu_init") != NULL);
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  /* nmad, then StarPU on rank 0 before the others, then rondo_starpu. */
  if (STARPU_CALL_UNCHECKED(rondo_starpu_init_all(&conf)) != RONDO_OK) {
    printf("FAIL rondo_starpu_init_all: %s\n", rondo_starpu_last_error());
    return 1;
  }
  CHECK(starpu_is_initialized());
  CHECK(rondo_starpu_init() == RONDO_ERR_BUSY);
  CHECK(strstr(rondo_starpu_last_error(), "already") != NULL);
  CHECK(rondo_starpu_init_all(&conf) == RONDO_ERR_BUSY);
  me = rondo_starpu_rank();
  n = rondo_starpu_size();
  CHECK(me >= 0 && n >= 1);

  if (n >= 2) t_dependencies();
  t_fanout(0, 40);
  t_fanout(1, 41);
  if (n >= 2) t_fanout(2, 42);
  t_tag();
  t_wrong_size();
  t_bad_args();

  /* Every rank's idle worker calls the hook: rondo_starpu_init wakes the
   * workers that slept before the hook was registered. A rank whose worker
   * ran no task (rank 2 of 4 runs none) sees its first call when the woken
   * worker gets a core, so wait for it, for 30 s at most. */
  rondo_starpu_stats_t st;
  rondo_starpu_get_stats(&st);
  for (int i = 0; i < 30000 && st.hook_calls == 0; ++i) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    rondo_starpu_get_stats(&st);
  }
  CHECK(st.hook_calls > 0);

  /* Gather the counts on rank 0 over the nmad C API (still running). */
  rondo_nmad_session_t s;
  CHECK(rondo_nmad_session_open("check", &s) == RONDO_OK);
  int total_checks = checks, total_failures = failures;
  int mine[2] = {checks, failures};
  rondo_nmad_request_t q;
  rondo_nmad_request_init(&q);
  if (me == 0) {
    for (int r = 1; r < n; ++r) {
      int theirs[2] = {0, 1};
      if (rondo_nmad_irecv(s, r, 9, theirs, sizeof theirs, &q) != RONDO_OK ||
          rondo_nmad_wait(&q) != RONDO_OK)
        theirs[1] = 1;
      total_checks += theirs[0];
      total_failures += theirs[1];
    }
  } else if (rondo_nmad_isend(s, 0, 9, mine, sizeof mine, 0, &q) ==
             RONDO_OK) {
    rondo_nmad_wait(&q);
  }
  CHECK(rondo_starpu_shutdown() == RONDO_OK);
  CHECK(rondo_starpu_shutdown() == RONDO_ERR_NOT_INITIALIZED);
  STARPU_CALL_UNCHECKED((starpu_shutdown(), 0));
  if (me == 0) {
    if (total_failures == 0 && failures == 0)
      printf("rondo_starpu_check: ok (%d checks)\n", total_checks);
    else
      printf("rondo_starpu_check: FAILED (%d failures)\n",
             total_failures + failures);
  }
  return failures == 0 ? 0 : 1;
}
