/* The logger's C entry point (topology/base/log.h), for Rondo's C code
 * (nmad/starpu): the message is already formatted; it gets the same prefix,
 * level filter and sink as the C++ macros. Thread-safe. */
#ifndef RONDO_TOPOLOGY_BASE_LOG_C_H_
#define RONDO_TOPOLOGY_BASE_LOG_C_H_

#ifdef __cplusplus
extern "C" {
#endif

enum {
  RONDO_LOG_LEVEL_ERROR = 0,
  RONDO_LOG_LEVEL_WARN = 1,
  RONDO_LOG_LEVEL_INFO = 2,
  RONDO_LOG_LEVEL_DEBUG = 3,
  RONDO_LOG_LEVEL_TRACE = 4
};

/* Whether a message at `level` would be printed. */
int rondo_log_enabled(int level);
/* Prints `message` (no trailing newline needed) at `level`. */
void rondo_log_message(int level, const char* message);

#ifdef __cplusplus
}
#endif

#endif /* RONDO_TOPOLOGY_BASE_LOG_C_H_ */
