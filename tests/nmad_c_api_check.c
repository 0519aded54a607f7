/* nmad_c_api_check: the nmad C API (nmad/rondo_nmad.h) compiled as C, on
 * any number of ranks under rondo-run:
 *   - init (twice is RONDO_ERR_BUSY), rank, size, the engine made here is
 *     the engine C API's (rondo_engine_initialized, rondo_engine_run_once);
 *   - a ring of messages with completion callbacks that run from an engine
 *     task (driven only by rondo_engine_run_once, as a task runtime's idle
 *     hook would), one of which starts the next send itself;
 *   - receive info, a truncated receive (RONDO_ERR_TRUNCATED, the
 *     sender's size reported), a request still in flight refused
 *     (RONDO_ERR_BUSY), bad ranks and uninitialised requests refused with
 *     a message;
 *   - a dynamic broadcast from rank 0 to everyone, received by plain
 *     receives, and the detector merging registrations into one list;
 *   - barrier and finalize; a second finalize is RONDO_ERR_NOT_INITIALIZED.
 * Prints "nmad_c_api_check: ok (N checks)" on rank 0 when every check of
 * every rank passed (gathered over the API itself). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rondo_engine.h"
#include "nmad/rondo_nmad.h"

static int checks, failures, me = -1;

#define CHECK(cond)                                                     \
  do {                                                                  \
    ++checks;                                                           \
    if (!(cond)) {                                                      \
      ++failures;                                                       \
      printf("FAIL rank %d %s:%d: %s (last error: %s)\n", me, __FILE__, \
             __LINE__, #cond, rondo_nmad_last_error());                 \
    }                                                                   \
  } while (0)

/* Polls the engine the way a runtime's idle workers do, until *flag is set
 * (bounded: a lost callback fails the check instead of hanging). */
static int drive_until(volatile int* flag, int want) {
  const int core = sched_getcpu();
  for (long i = 0; i < 200000000L && *flag < want; ++i) {
    if (rondo_engine_run_once(core) < 0) return 0;
  }
  return *flag >= want;
}

struct Ring {
  rondo_nmad_session_t session;
  int to, from, rounds;
  int value, got;
  volatile int received;  /* callbacks run */
  volatile int sent;
  int last_status;
  rondo_nmad_request_t send_req, recv_req;
};

static void on_sent(rondo_nmad_request_t* req, int status, void* arg) {
  struct Ring* r = arg;
  (void)req;
  if (status != RONDO_OK) r->last_status = status;
  r->sent++;
}

/* Each receive completion reposts the next receive and sends on: the
 * callback starts operations itself (no lock is held). */
static void on_received(rondo_nmad_request_t* req, int status, void* arg) {
  struct Ring* r = arg;
  if (status != RONDO_OK) r->last_status = status;
  int src = -2, tag = -2;
  size_t size = 0;
  if (rondo_nmad_recv_info(req, &src, &tag, &size) != RONDO_OK ||
      src != r->from || size != sizeof(int) || tag != r->received)
    r->last_status = RONDO_ERR_INTERNAL;
  r->got += r->value;
  const int round = ++r->received;
  if (round < r->rounds) {
    if (rondo_nmad_irecv(r->session, r->from, round, &r->value,
                         sizeof r->value, &r->recv_req) != RONDO_OK)
      r->last_status = RONDO_ERR_INTERNAL;
  }
}

static void t_ring(rondo_nmad_session_t s, int n) {
  struct Ring r;
  memset(&r, 0, sizeof r);
  r.session = s;
  r.to = (me + 1) % n;
  r.from = (me + n - 1) % n;
  r.rounds = 5;
  rondo_nmad_request_init(&r.send_req);
  rondo_nmad_request_init(&r.recv_req);
  CHECK(rondo_nmad_request_set_callback(&r.send_req, on_sent, &r) ==
        RONDO_OK);
  CHECK(rondo_nmad_request_set_callback(&r.recv_req, on_received, &r) ==
        RONDO_OK);
  CHECK(rondo_nmad_irecv(s, r.from, 0, &r.value, sizeof r.value,
                         &r.recv_req) == RONDO_OK);
  int payload[5];
  for (int round = 0; round < r.rounds; ++round) {
    payload[round] = me * 100 + round;
    CHECK(rondo_nmad_isend(s, r.to, round, &payload[round], sizeof(int), 0,
                           &r.send_req) == RONDO_OK);
    CHECK(drive_until(&r.sent, round + 1));
  }
  CHECK(drive_until(&r.received, 5));
  CHECK(r.last_status == RONDO_OK);
  long want = 0;
  for (int round = 0; round < 5; ++round) want += r.from * 100 + round;
  CHECK(r.got == want);
}

static void t_errors(rondo_nmad_session_t s, int n) {
  rondo_nmad_request_t q;
  rondo_nmad_request_init(&q);
  int x = 1;
  /* A request in flight (a receive nobody has sent to yet) is refused for
   * a second operation; a message to itself then completes it. */
  int slot = -1, one = 1;
  CHECK(rondo_nmad_irecv(s, me, 999, &slot, sizeof slot, &q) == RONDO_OK);
  CHECK(rondo_nmad_irecv(s, me, 998, &slot, sizeof slot, &q) ==
        RONDO_ERR_BUSY);
  CHECK(strstr(rondo_nmad_last_error(), "in flight") != NULL);
  rondo_nmad_request_t kick;
  rondo_nmad_request_init(&kick);
  CHECK(rondo_nmad_isend(s, me, 999, &one, sizeof one, 0, &kick) == RONDO_OK);
  CHECK(rondo_nmad_wait(&kick) == RONDO_OK);
  CHECK(rondo_nmad_wait(&q) == RONDO_OK);
  CHECK(slot == 1);
  CHECK(rondo_nmad_isend(s, n + 3, 0, &x, sizeof x, 0, &q) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_nmad_last_error(), "peer") != NULL);
  rondo_nmad_request_t raw;
  memset(&raw, 0, sizeof raw);
  CHECK(rondo_nmad_isend(s, 0, 0, &x, sizeof x, 0, &raw) ==
        RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(rondo_nmad_last_error(), "not initialised") != NULL);
  CHECK(rondo_nmad_recv_info(&q, NULL, NULL, NULL) == RONDO_ERR_BUSY ||
        rondo_nmad_recv_info(&q, NULL, NULL, NULL) == RONDO_OK);
  CHECK(rondo_nmad_dynamic_bcast(s, &x, sizeof x, 0, NULL, NULL, 0, &q) ==
        RONDO_ERR_INVALID_ARGUMENT);
  if (n >= 2) {
    /* The root among its own recipients. */
    int self[1] = {me};
    CHECK(rondo_nmad_dynamic_bcast(s, &x, sizeof x, 0, self, NULL, 1, &q) ==
          RONDO_ERR_INVALID_ARGUMENT);
    CHECK(strstr(rondo_nmad_last_error(), "root") != NULL);
  }
  /* A truncated receive: rank r sends 16 bytes to itself, received into 8. */
  char big[16] = "0123456789abcde", small[8];
  rondo_nmad_request_t snd, rcv;
  rondo_nmad_request_init(&snd);
  rondo_nmad_request_init(&rcv);
  CHECK(rondo_nmad_irecv(s, me, 77, small, sizeof small, &rcv) == RONDO_OK);
  CHECK(rondo_nmad_isend(s, me, 77, big, sizeof big, 0, &snd) == RONDO_OK);
  CHECK(rondo_nmad_wait(&snd) == RONDO_OK);
  CHECK(rondo_nmad_wait(&rcv) == RONDO_ERR_TRUNCATED);
  size_t size = 0;
  int src = -1, tag = -1;
  CHECK(rondo_nmad_recv_info(&rcv, &src, &tag, &size) == RONDO_OK);
  CHECK(size == sizeof big && src == me && tag == 77);
  CHECK(memcmp(small, big, sizeof small) == 0);
}

static void t_bcast(rondo_nmad_session_t s, int n) {
  enum { kLen = 100000 };
  char* buf = malloc(kLen);
  for (int i = 0; i < kLen; ++i) buf[i] = me == 0 ? (char)(i * 7 + 3) : 0;
  rondo_nmad_request_t q;
  rondo_nmad_request_init(&q);
  if (me == 0) {
    if (n > 1) {
      /* The detector merges the recipients registered before the data is
       * ready into one list; a late one is missed. */
      rondo_nmad_detector_t d = rondo_nmad_detector_create();
      CHECK(d != NULL);
      static char key;
      for (int r = n - 1; r >= 1; --r)
        CHECK(rondo_nmad_detector_register(d, &key, 9, r, r) == 1);
      CHECK(rondo_nmad_detector_register(d, &key, 9, 1, 1) == 1);
      int ranks[64], prios[64];
      int small_room = rondo_nmad_detector_ready(d, &key, 9, ranks, prios, 0);
      CHECK(small_room == n - 1);
      int m = rondo_nmad_detector_ready(d, &key, 9, ranks, prios, 64);
      CHECK(m == n - 1);
      for (int i = 0; i < m && i < 64; ++i) CHECK(ranks[i] == n - 1 - i);
      CHECK(rondo_nmad_detector_register(d, &key, 9, 1, 0) == 0);
      rondo_nmad_detector_stats_t st;
      rondo_nmad_detector_stats(d, &st);
      CHECK(st.missed == 1 && st.duplicates == 1);
      CHECK(st.broadcasts + st.single == 1);
      CHECK(rondo_nmad_dynamic_bcast(s, buf, kLen, 9, ranks, prios, m, &q) ==
            RONDO_OK);
      CHECK(rondo_nmad_wait(&q) == RONDO_OK);
      rondo_nmad_detector_destroy(d);
    }
  } else {
    CHECK(rondo_nmad_irecv(s, 0, 9, buf, kLen, &q) == RONDO_OK);
    CHECK(rondo_nmad_wait(&q) == RONDO_OK);
    int bad = 0;
    for (int i = 0; i < kLen; ++i) bad += buf[i] != (char)(i * 7 + 3);
    CHECK(bad == 0);
  }
  free(buf);
}

int main(void) {
  CHECK(rondo_nmad_rank() == RONDO_ERR_NOT_INITIALIZED);
  CHECK(rondo_nmad_init() == RONDO_OK);
  me = rondo_nmad_rank();
  const int n = rondo_nmad_size();
  CHECK(me >= 0 && n >= 1 && me < n);
  CHECK(rondo_nmad_init() == RONDO_ERR_BUSY);
  CHECK(strstr(rondo_nmad_last_error(), "already") != NULL);
  CHECK(rondo_engine_initialized() == 1);
  CHECK(rondo_engine_background() >= 0);
  rondo_nmad_session_t s = NULL, s2 = NULL;
  CHECK(rondo_nmad_session_open("c-api-check", &s) == RONDO_OK);
  CHECK(rondo_nmad_session_open("c-api-check", &s2) == RONDO_OK);
  CHECK(s == s2);
  CHECK(rondo_nmad_session_open(NULL, &s2) == RONDO_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(rondo_nmad_failure_text(0), "") == 0);

  t_ring(s, n);
  CHECK(rondo_nmad_barrier() == RONDO_OK);
  t_errors(s, n);
  CHECK(rondo_nmad_barrier() == RONDO_OK);
  t_bcast(s, n);

  /* Rank 0 gathers every rank's counts. */
  int mine[2] = {checks, failures};
  int total_checks = checks, total_failures = failures;
  if (me == 0) {
    for (int r = 1; r < n; ++r) {
      int theirs[2] = {0, 1};
      rondo_nmad_request_t q;
      rondo_nmad_request_init(&q);
      if (rondo_nmad_irecv(s, r, 1000, theirs, sizeof theirs, &q) !=
              RONDO_OK ||
          rondo_nmad_wait(&q) != RONDO_OK)
        theirs[1] = 1;
      total_checks += theirs[0];
      total_failures += theirs[1];
    }
  } else {
    rondo_nmad_request_t q;
    rondo_nmad_request_init(&q);
    if (rondo_nmad_isend(s, 0, 1000, mine, sizeof mine, 0, &q) == RONDO_OK)
      rondo_nmad_wait(&q);
  }
  CHECK(rondo_nmad_finalize() == RONDO_OK);
  CHECK(rondo_nmad_finalize() == RONDO_ERR_NOT_INITIALIZED);
  CHECK(rondo_engine_initialized() == 0);
  if (me == 0) {
    if (total_failures == 0 && failures == 0)
      printf("nmad_c_api_check: ok (%d checks)\n", total_checks);
    else
      printf("nmad_c_api_check: FAILED (%d failures)\n",
             total_failures + failures);
  }
  return failures == 0 ? 0 : 1;
}
