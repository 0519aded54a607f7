// rondo-run: Rondo's launcher for one machine.
//
//   rondo-run -n N [--bind auto|none|core] [--kill-grace S] [--timeout S]
//             [--rank-wrapper "CMD ARGS {rank}"] prog args...
//
// Why: without Slurm or Open MPI a job still needs its ranks started, their
// addresses exchanged and a dead rank noticed by the others instead of
// hanging them. rondo-run forks N ranks, serves the protocol of
// internal/protocol.h on a private Unix socket (mkdtemp directory, mode
// 0700, plus a random per-job key), and watches its children:
//
//  * one thread, one poll() loop over the listening socket, every client
//    connection (non-blocking, with an output buffer each) and a signalfd;
//  * a rank that is killed by a signal, exits non-zero, or exits after
//    connecting but without FINI is a failure: every connected rank gets
//    FAILURE{rank, text}, pending and later FENCE/BARRIER are answered with
//    a failure, and the survivors get --kill-grace seconds before SIGKILL;
//  * SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to the
//    live ranks; --timeout kills the whole job;
//  * the exit status is the first failing rank's (its exit code, or
//    128+signal), 1 if the only failure was a missing FINI, else 0;
//  * --rank-wrapper (default: $RONDO_RUN_RANK_WRAPPER) puts a command in
//    front of every rank's, with {rank} replaced by the rank: `ip netns exec
//    host-{rank}` starts each rank in its own network namespace (the
//    emulated cluster of bench/cluster/). The wrapper must exec the program
//    (ip netns exec, env, nice, taskset do), so that the rank's pid, exit
//    status and signals stay the ones rondo-run watches; the rank reaches
//    the launcher through the socket's path, which a network namespace
//    does not hide. Wrapped ranks may be on different hosts, so rondo-run
//    does not describe their node (RONDO_LOCAL_*, RONDO_NODE_CPUS): it sets
//    RONDO_RUN_DISCOVER_NODES=1 and the ranks learn their nodes from each
//    other's host keys (nmad/node.h), as under PMIx;
//
// Global state: none. Signals are blocked and read from a signalfd in the
// loop, so there is no signal handler (and no self-pipe) at all.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drivers/bootstrap/internal/protocol.h"
#include "topology/base/config_registry.h"

extern char** environ;

namespace rondo::drivers::bootstrap {
namespace {

using internal::FrameReader;
using internal::Message;
using internal::MessageType;
using Clock = std::chrono::steady_clock;

constexpr int kUsageError = 2;
// A rank whose connection closes without FINI is normally exiting: its
// SIGCHLD follows within microseconds and names the cause (signal, status).
// Only if it is still running this long after is the lost connection itself
// reported as the failure.
constexpr std::chrono::milliseconds kLostConnectionGrace{2000};

struct RunOptions {
  int ranks = 0;
  bool bind_cores = false;
  double kill_grace_s = 10;
  std::optional<double> timeout_s;
  // Words put before `command` for every rank, "{rank}" replaced; empty:
  // none.
  std::vector<std::string> rank_wrapper;
  std::vector<std::string> command;
};

// Splits a --rank-wrapper text into words the way a POSIX shell splits a
// simple command, without any expansion: blanks separate words, '...'
// quotes literally, "..." quotes with \" \\ \$ \` escapes, and a backslash
// outside quotes escapes the next character. Then checks the placeholders:
// only {rank} is known. Returns an empty string, or what is wrong.
std::string SplitRankWrapper(std::string_view text,
                             std::vector<std::string>* words) {
  words->clear();
  std::string word;
  bool in_word = false;  // a word has started (it may still be empty: '')
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words->push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (ch == '\\') {
      if (++i == text.size()) return "it ends with a lone backslash";
      word += text[i];
    } else if (ch == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos)
        return "the single quote at offset " + std::to_string(i) +
               " is never closed";
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (ch == '"') {
      const size_t open = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size() &&
            std::string_view("\"\\$`\n").find(text[i + 1]) !=
                std::string_view::npos)
          ++i;
        word += text[i];
      }
      if (i == text.size())
        return "the double quote at offset " + std::to_string(open) +
               " is never closed";
    } else {
      word += ch;
    }
  }
  if (in_word) words->push_back(std::move(word));
  if (words->empty()) return "it is empty";
  for (const std::string& w : *words) {
    for (size_t open = w.find('{'); open != std::string::npos;
         open = w.find('{', open + 1)) {
      const size_t close = w.find('}', open);
      if (close == std::string::npos) break;
      const std::string name = w.substr(open + 1, close - open - 1);
      if (name.empty() || name == "rank" ||
          !std::all_of(name.begin(), name.end(),
                       [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }))
        continue;
      return "unknown placeholder '{" + name + "}'; allowed: {rank}";
    }
  }
  return "";
}

// `word` with every "{rank}" replaced by `rank`.
std::string WithRank(std::string word, int rank) {
  const std::string value = std::to_string(rank);
  for (size_t at = word.find("{rank}"); at != std::string::npos;
       at = word.find("{rank}", at + value.size()))
    word.replace(at, std::strlen("{rank}"), value);
  return word;
}

// One client connection. `rank` is -1 until HELLO is accepted.
struct Connection {
  int fd = -1;
  int rank = -1;
  FrameReader reader;
  std::vector<uint8_t> out;  // bytes not yet written
  size_t out_pos = 0;
  bool closed = false;  // to be removed at the end of this loop turn
};

struct Rank {
  pid_t pid = -1;
  bool exited = false;
  bool connected = false;  // HELLO was accepted once
  bool fini = false;
  // Its connection ended without FINI while the process still ran.
  std::optional<std::chrono::steady_clock::time_point> lost_at;
  bool lost_reported = false;
  bool in_fence = false;
  bool in_barrier = false;
  Connection* conn = nullptr;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> puts;  // this epoch
};

std::string SignalText(int sig) {
  const char* name = sigdescr_np(sig);
  return "signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
}

class Launcher {
 public:
  explicit Launcher(RunOptions options)
      : options_(std::move(options)), ranks_(options_.ranks) {}
  ~Launcher();

  // Sets up, starts the ranks, serves them until all have exited; returns
  // rondo-run's exit status.
  int Run();

 private:
  bool Setup();
  void SpawnAll();
  void Loop();
  void OnSignal(int sig);
  void Reap();
  void OnRankExit(int rank, int wait_status);
  // Records a failure of `rank`: stderr line, FAILURE to every other
  // connected rank, pending collectives failed, kill-grace started.
  void ReportFailure(int rank, const std::string& what, int status);
  void AcceptAll();
  void OnReadable(Connection& c);
  void OnWritable(Connection& c);
  void OnMessage(Connection& c, Message m);
  void OnHello(Connection& c, const Message& m);
  void CloseConnection(Connection& c, const std::string& why);
  void Send(Connection& c, const Message& m);
  void Broadcast(const Message& m, int except_rank);
  // Answers the pending fence/barrier if it can finish or never will.
  void CheckCollectives();
  void FailCollective(bool fence, const std::string& why);
  void KillLive(int sig);
  int LiveRanks() const;

  const RunOptions options_;
  std::vector<Rank> ranks_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::string dir_, socket_path_, key_hex_;
  int listen_fd_ = -1;
  int signal_fd_ = -1;
  sigset_t old_mask_{};
  int fence_count_ = 0, barrier_count_ = 0;
  std::string first_failure_;       // text of the first failure, if any
  std::vector<Message> failure_notices_;  // every FAILURE sent so far
  std::optional<int> exit_status_;  // of the first failing rank
  bool missing_fini_ = false;
  std::optional<Clock::time_point> kill_at_, timeout_at_;
};

Launcher::~Launcher() {
  for (auto& c : conns_) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

bool Launcher::Setup() {
  // The job key: 32 random bytes.
  uint8_t key[internal::kJobKeyBytes];
  size_t got = 0;
  while (got < sizeof(key)) {
    ssize_t n = ::getrandom(key + got, sizeof(key) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::fprintf(stderr, "rondo-run: getrandom failed: %s\n",
                   std::strerror(errno));
      return false;
    }
    got += static_cast<size_t>(n);
  }
  key_hex_ = internal::ToHex(key);

  // A private directory: mkdtemp creates it with mode 0700. Under $TMPDIR
  // if the socket path fits in sun_path, else under /tmp.
  const char* tmpdir = rondo::base::ForeignEnv("TMPDIR");
  std::vector<std::string> bases;
  if (tmpdir != nullptr && *tmpdir != '\0') bases.emplace_back(tmpdir);
  bases.emplace_back("/tmp");
  for (const std::string& base : bases) {
    std::string tmpl = base + "/rondo-run.XXXXXX";
    if (tmpl.size() + std::strlen("/socket") >= sizeof(sockaddr_un::sun_path))
      continue;
    if (::mkdtemp(tmpl.data()) == nullptr) continue;
    dir_ = tmpl;
    break;
  }
  if (dir_.empty()) {
    std::fprintf(stderr,
                 "rondo-run: cannot create a private directory under "
                 "$TMPDIR or /tmp: %s\n",
                 std::strerror(errno));
    return false;
  }
  socket_path_ = dir_ + "/socket";

  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  if (listen_fd_ < 0 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
          0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0) {
    std::fprintf(stderr, "rondo-run: cannot listen on %s: %s\n",
                 socket_path_.c_str(), std::strerror(errno));
    return false;
  }

  // Signals arrive through a signalfd; the old mask is restored in ranks.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2})
    sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, &old_mask_);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) {
    std::fprintf(stderr, "rondo-run: signalfd failed: %s\n",
                 std::strerror(errno));
    return false;
  }
  return true;
}

void Launcher::SpawnAll() {
  const int n = options_.ranks;
  // CPUs rondo-run may use, for --bind core.
  std::vector<int> cpus;
  if (options_.bind_cores) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) cpus.push_back(c);
    if (cpus.empty()) cpus.push_back(0);
  }
  // The environment without any inherited variable we set.
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view v(*e);
    bool ours = false;
    for (std::string_view name :
         {"RONDO_RUN_SOCKET=", "RONDO_RUN_KEY=", "RONDO_RANK=", "RONDO_SIZE=",
          "RONDO_LOCAL_RANK=", "RONDO_LOCAL_SIZE=", "RONDO_NODE_CPUS=",
          "RONDO_RUN_DISCOVER_NODES=",
          // The launcher's own setting; a rank's engine would warn about it.
          "RONDO_RUN_RANK_WRAPPER="})
      ours = ours || v.starts_with(name);
    if (!ours) base_env.emplace_back(v);
  }
  const pid_t parent = ::getpid();
  // Where each rank will compute, for the engines' placement (engine/
  // placement.h): the CPU each is bound to, else rondo-run's own mask.
  std::string node_cpus;
  {
    std::string own;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask))
          own += (own.empty() ? "" : ",") + std::to_string(c);
    for (int r = 0; r < n; ++r) {
      if (r > 0) node_cpus += ';';
      node_cpus += options_.bind_cores ? std::to_string(cpus[r % cpus.size()])
                                       : own;
    }
  }

  for (int r = 0; r < n; ++r) {
    // The rank's command line: the wrapper's words for this rank, then the
    // program and its arguments.
    std::vector<std::string> words;
    for (const std::string& w : options_.rank_wrapper)
      words.push_back(WithRank(w, r));
    words.insert(words.end(), options_.command.begin(), options_.command.end());
    std::vector<char*> argv;
    for (std::string& a : words) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = base_env;
    env.push_back("RONDO_RUN_SOCKET=" + socket_path_);
    env.push_back("RONDO_RUN_KEY=" + key_hex_);
    env.push_back("RONDO_RANK=" + std::to_string(r));
    env.push_back("RONDO_SIZE=" + std::to_string(n));
    if (options_.rank_wrapper.empty()) {
      env.push_back("RONDO_LOCAL_RANK=" + std::to_string(r));
      env.push_back("RONDO_LOCAL_SIZE=" + std::to_string(n));
      if (!node_cpus.empty()) env.push_back("RONDO_NODE_CPUS=" + node_cpus);
    } else {
      // A wrapper may start each rank on another (emulated) host: the
      // ranks find their nodes by exchanging host keys (nmad/node.h).
      env.push_back("RONDO_RUN_DISCOVER_NODES=1");
    }
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "rondo-run: cannot start rank %d: fork: %s\n", r,
                   std::strerror(errno));
      if (!exit_status_) exit_status_ = 1;
      if (first_failure_.empty()) first_failure_ = "rondo-run could not fork";
      KillLive(SIGKILL);
      return;
    }
    if (pid == 0) {
      // Child (rondo-run is single-threaded, so the parent's state is sane).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // die with rondo-run
      if (::getppid() != parent) ::_exit(127);
      if (options_.bind_cores) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[r % cpus.size()], &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0)
          std::fprintf(stderr, "rondo-run: rank %d: cannot bind to CPU %d: %s\n",
                       r, cpus[r % cpus.size()], std::strerror(errno));
      }
      sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
      ::execvpe(argv[0], argv.data(), envp.data());
      std::fprintf(stderr, "rondo-run: rank %d: cannot execute '%s': %s\n", r,
                   argv[0], std::strerror(errno));
      std::fflush(stderr);
      ::_exit(127);
    }
    ranks_[r].pid = pid;
  }
}

int Launcher::LiveRanks() const {
  int live = 0;
  for (const Rank& r : ranks_) live += r.pid > 0 && !r.exited;
  return live;
}

void Launcher::KillLive(int sig) {
  for (const Rank& r : ranks_)
    if (r.pid > 0 && !r.exited) ::kill(r.pid, sig);
}

void Launcher::Send(Connection& c, const Message& m) {
  if (c.closed) return;
  internal::AppendFrame(m, c.out);
}

void Launcher::Broadcast(const Message& m, int except_rank) {
  for (int r = 0; r < options_.ranks; ++r)
    if (r != except_rank && ranks_[r].conn != nullptr)
      Send(*ranks_[r].conn, m);
}

void Launcher::CloseConnection(Connection& c, const std::string& why) {
  if (c.closed) return;
  c.closed = true;
  if (!why.empty()) std::fprintf(stderr, "rondo-run: %s\n", why.c_str());
  if (c.rank >= 0) {
    Rank& r = ranks_[c.rank];
    r.conn = nullptr;
    if (!r.fini && !r.exited) r.lost_at = Clock::now();
  }
}

void Launcher::OnRankExit(int rank, int wait_status) {
  Rank& r = ranks_[rank];
  // Everything the rank sent before dying is in the socket already: read it
  // first, so a FINI sent just before exit(0) is not mistaken for a crash.
  if (r.conn != nullptr) OnReadable(*r.conn);
  r.exited = true;
  std::string what;
  int status = 0;
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    what = "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) +
           ") was killed by " + SignalText(sig);
    status = 128 + sig;
  } else if (WEXITSTATUS(wait_status) != 0) {
    status = WEXITSTATUS(wait_status);
    what = "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) +
           ") exited with status " + std::to_string(status);
  } else if (r.connected && !r.fini) {
    // A rank that never connected (a program that does not use Rondo) may
    // exit 0 freely; one that joined the job must say goodbye.
    what = "rank " + std::to_string(rank) + " (pid " + std::to_string(r.pid) +
           ") exited with status 0 without calling Finalize";
    missing_fini_ = true;
  }
  if (!what.empty()) ReportFailure(rank, what, status);
  CheckCollectives();
}

void Launcher::ReportFailure(int rank, const std::string& what, int status) {
  std::fprintf(stderr, "rondo-run: %s\n", what.c_str());
  if (status != 0 && !exit_status_) exit_status_ = status;
  if (first_failure_.empty()) first_failure_ = what;
  Message failure;
  failure.type = MessageType::kFailure;
  failure.rank = rank;
  failure.text = what;
  Broadcast(failure, rank);
  failure_notices_.push_back(std::move(failure));
  if (!kill_at_ && LiveRanks() > 0)
    kill_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(
                                      options_.kill_grace_s));
  CheckCollectives();
}

void Launcher::Reap() {
  for (;;) {
    int ws = 0;
    const pid_t pid = ::waitpid(-1, &ws, WNOHANG);
    if (pid <= 0) return;
    for (int r = 0; r < options_.ranks; ++r)
      if (ranks_[r].pid == pid && !ranks_[r].exited) OnRankExit(r, ws);
  }
}

void Launcher::OnSignal(int sig) {
  if (sig == SIGCHLD) {
    Reap();
    return;
  }
  KillLive(sig);  // forward
}

void Launcher::FailCollective(bool fence, const std::string& why) {
  Message done;
  done.type = fence ? MessageType::kFenceDone : MessageType::kBarrierDone;
  done.ok = false;
  done.text = why;
  for (Rank& r : ranks_) {
    bool& in = fence ? r.in_fence : r.in_barrier;
    if (!in) continue;
    in = false;
    if (r.conn != nullptr) Send(*r.conn, done);
  }
  (fence ? fence_count_ : barrier_count_) = 0;
}

void Launcher::CheckCollectives() {
  const int n = options_.ranks;
  for (bool fence : {true, false}) {
    int& count = fence ? fence_count_ : barrier_count_;
    if (count == 0) continue;
    // Never finishes: a failure happened, or a rank that has not joined
    // can no longer join.
    std::string why = first_failure_;
    for (int i = 0; i < n && why.empty(); ++i) {
      const Rank& r = ranks_[i];
      if (fence ? r.in_fence : r.in_barrier) continue;
      if (r.exited || r.fini)
        why = "rank " + std::to_string(i) +
              (r.exited ? " exited" : " called Finalize") +
              " before joining the " + (fence ? "fence" : "barrier");
    }
    if (!why.empty()) {
      FailCollective(fence, why);
      continue;
    }
    if (count < n) continue;
    Message done;
    done.type = fence ? MessageType::kFenceDone : MessageType::kBarrierDone;
    done.ok = true;
    std::vector<uint8_t> frames;
    if (fence) {
      // Every put of this epoch, then FENCE_DONE: clients accumulate them,
      // so Get() is local from now on.
      for (int i = 0; i < n; ++i) {
        for (auto& [key, value] : ranks_[i].puts) {
          Message kv;
          kv.type = MessageType::kKeyValue;
          kv.rank = i;
          kv.key = std::move(key);
          kv.value = std::move(value);
          internal::AppendFrame(kv, frames);
        }
        ranks_[i].puts.clear();
      }
    }
    internal::AppendFrame(done, frames);
    for (Rank& r : ranks_) {
      (fence ? r.in_fence : r.in_barrier) = false;
      if (r.conn != nullptr && !r.conn->closed)
        r.conn->out.insert(r.conn->out.end(), frames.begin(), frames.end());
    }
    count = 0;
  }
}

void Launcher::OnHello(Connection& c, const Message& m) {
  if (!internal::ConstantTimeEquals(m.key, key_hex_)) {
    CloseConnection(c, "refused a connection with a wrong key (claiming rank " +
                           std::to_string(m.rank) + ")");
    return;
  }
  if (m.rank < 0 || m.rank >= options_.ranks) {
    CloseConnection(c, "refused a connection for rank " +
                           std::to_string(m.rank) + ": allowed ranks are 0.." +
                           std::to_string(options_.ranks - 1));
    return;
  }
  Rank& r = ranks_[m.rank];
  if (r.connected) {
    CloseConnection(c, "refused a second connection for rank " +
                           std::to_string(m.rank));
    return;
  }
  r.connected = true;
  r.conn = &c;
  c.rank = m.rank;
  Message welcome;
  welcome.type = MessageType::kWelcome;
  Send(c, welcome);
  // Failures that happened before this rank connected.
  for (const Message& f : failure_notices_) Send(c, f);
}

void Launcher::OnMessage(Connection& c, Message m) {
  if (c.rank < 0) {
    if (m.type == MessageType::kHello) {
      OnHello(c, m);
    } else {
      CloseConnection(c, "refused a connection that sent " +
                             std::string(internal::MessageTypeName(m.type)) +
                             " before HELLO");
    }
    return;
  }
  Rank& r = ranks_[c.rank];
  switch (m.type) {
    case MessageType::kPut:
      if (!internal::CheckKey(m.key).empty()) {
        CloseConnection(c, "closed the connection of rank " +
                               std::to_string(c.rank) + ": bad PUT: " +
                               internal::CheckKey(m.key));
        return;
      }
      r.puts.emplace_back(std::move(m.key), std::move(m.value));
      return;
    case MessageType::kFence:
    case MessageType::kBarrier: {
      const bool fence = m.type == MessageType::kFence;
      bool& in = fence ? r.in_fence : r.in_barrier;
      if (!in) {
        in = true;
        ++(fence ? fence_count_ : barrier_count_);
      }
      CheckCollectives();
      return;
    }
    case MessageType::kFini:
      r.fini = true;
      CheckCollectives();
      return;
    default:
      CloseConnection(c, "closed the connection of rank " +
                             std::to_string(c.rank) + ": unexpected " +
                             std::string(internal::MessageTypeName(m.type)));
      CheckCollectives();
      return;
  }
}

void Launcher::OnReadable(Connection& c) {
  uint8_t buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      // EOF: expected after FINI; otherwise the rank is judged when it
      // exits (or after kLostConnectionGrace).
      CloseConnection(c, "");
      CheckCollectives();
      return;
    }
    c.reader.Append({buf, static_cast<size_t>(n)});
    Message m;
    FrameReader::Result r;
    while ((r = c.reader.Next(&m)) == FrameReader::Result::kFrame) {
      OnMessage(c, std::move(m));
      if (c.closed) return;
    }
    if (r == FrameReader::Result::kMalformed) {
      CloseConnection(c, (c.rank >= 0 ? "closed the connection of rank " +
                                            std::to_string(c.rank)
                                      : std::string("refused a connection")) +
                             ": " + c.reader.error());
      CheckCollectives();
      return;
    }
  }
}

void Launcher::OnWritable(Connection& c) {
  while (c.out_pos < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_pos,
                             c.out.size() - c.out_pos, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      CloseConnection(c, "");
      CheckCollectives();
      return;
    }
    c.out_pos += static_cast<size_t>(n);
  }
  c.out.clear();
  c.out_pos = 0;
}

void Launcher::AcceptAll() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        std::fprintf(stderr, "rondo-run: accept failed: %s\n",
                     std::strerror(errno));
      return;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    conns_.push_back(std::move(c));
  }
}

void Launcher::Loop() {
  std::vector<pollfd> fds;
  std::vector<Connection*> polled;
  while (LiveRanks() > 0) {
    fds.clear();
    polled.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& c : conns_) {
      fds.push_back({c->fd,
                     static_cast<short>(POLLIN |
                                        (c->out.empty() ? 0 : POLLOUT)),
                     0});
      polled.push_back(c.get());
    }
    int timeout_ms = -1;
    const auto now = Clock::now();
    std::vector<std::optional<Clock::time_point>> deadlines = {kill_at_,
                                                               timeout_at_};
    for (const Rank& r : ranks_)
      if (r.lost_at && !r.lost_reported && !r.exited)
        deadlines.push_back(*r.lost_at + kLostConnectionGrace);
    for (const auto& at : deadlines) {
      if (!at) continue;
      const auto ms =
          std::chrono::ceil<std::chrono::milliseconds>(*at - now).count();
      const int clamped = static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
      timeout_ms = timeout_ms < 0 ? clamped : std::min(timeout_ms, clamped);
    }
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      std::fprintf(stderr, "rondo-run: poll failed: %s\n",
                   std::strerror(errno));
      KillLive(SIGKILL);
    }
    if (n > 0) {
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo info;
        while (::read(signal_fd_, &info, sizeof(info)) ==
               static_cast<ssize_t>(sizeof(info)))
          OnSignal(static_cast<int>(info.ssi_signo));
      }
      if (fds[1].revents & POLLIN) AcceptAll();
      for (size_t i = 0; i < polled.size(); ++i) {
        Connection& c = *polled[i];
        const short ev = fds[i + 2].revents;
        if (!c.closed && (ev & (POLLIN | POLLHUP | POLLERR))) OnReadable(c);
        if (!c.closed && (ev & POLLOUT)) OnWritable(c);
      }
      // Flush what this turn produced without waiting for the next poll.
      for (auto& c : conns_)
        if (!c->closed && !c->out.empty()) OnWritable(*c);
    }
    // Deadlines.
    const auto after = Clock::now();
    if (timeout_at_ && after >= *timeout_at_) {
      std::fprintf(stderr,
                   "rondo-run: the job ran longer than --timeout %g s; "
                   "killing the %d ranks still running\n",
                   *options_.timeout_s, LiveRanks());
      if (first_failure_.empty()) first_failure_ = "the job timed out";
      KillLive(SIGKILL);
      timeout_at_.reset();
    }
    for (int i = 0; i < options_.ranks; ++i) {
      Rank& r = ranks_[i];
      if (r.lost_at && !r.lost_reported && !r.exited &&
          after >= *r.lost_at + kLostConnectionGrace) {
        r.lost_reported = true;
        ReportFailure(i,
                      "rank " + std::to_string(i) + " (pid " +
                          std::to_string(r.pid) +
                          ") closed its connection to rondo-run without "
                          "calling Finalize",
                      0);
        missing_fini_ = true;
      }
    }
    if (kill_at_ && after >= *kill_at_) {
      std::fprintf(stderr,
                   "rondo-run: killing the %d ranks still running %g s "
                   "after the first failure (--kill-grace)\n",
                   LiveRanks(), options_.kill_grace_s);
      KillLive(SIGKILL);
      kill_at_.reset();
    }
    // Drop closed connections.
    std::erase_if(conns_, [](const std::unique_ptr<Connection>& c) {
      if (c->closed) ::close(c->fd);
      return c->closed;
    });
  }
}

int Launcher::Run() {
  if (!Setup()) return 1;
  if (options_.timeout_s)
    timeout_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(
                                         *options_.timeout_s));
  SpawnAll();
  Loop();
  if (exit_status_) return *exit_status_;
  return missing_fini_ ? 1 : 0;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "rondo-run: start N ranks of a program on this machine, with the "
      "rondo-run bootstrap (RONDO_RUN_SOCKET, RONDO_RANK, RONDO_SIZE, ...)."};
  RunOptions options;
  std::string bind = "auto";
  double timeout_s = 0;
  app.add_option("-n,--ranks", options.ranks, "number of ranks, 1..4096")
      ->required();
  app.add_option("--bind", bind,
                 "auto (default: core when the ranks fit on the CPUs "
                 "rondo-run may use, else none, as Open MPI's mpirun binds), "
                 "none, or core: rank r runs on CPU r mod #CPUs");
  app.add_option("--kill-grace", options.kill_grace_s,
                 "seconds the other ranks get to exit after a failure "
                 "(default 10)");
  app.add_option("--timeout", timeout_s,
                 "kill the job after this many seconds (default: none)");
  std::string wrapper_text;
  app.add_option("--rank-wrapper", wrapper_text,
                 "a command put in front of each rank's, {rank} replaced by "
                 "the rank (words and quotes as in sh, no expansions), e.g. "
                 "\"ip netns exec host-{rank}\"; it must exec the program. "
                 "Default: $RONDO_RUN_RANK_WRAPPER, else none");
  app.prefix_command();
  app.footer("Everything from the program name on is passed to the program.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    (void)app.exit(e);
    return kUsageError;
  }
  auto usage = [](const std::string& what) {
    std::fprintf(stderr, "rondo-run: %s\nUsage: rondo-run -n N [--bind auto|none|core] "
                         "[--kill-grace SECONDS] [--timeout SECONDS] "
                         "[--rank-wrapper \"CMD ARGS {rank}\"] prog args...\n",
                 what.c_str());
    return kUsageError;
  };
  if (options.ranks < 1 || options.ranks > internal::kMaxRanks)
    return usage("-n " + std::to_string(options.ranks) +
                 " is out of range; allowed: 1.." +
                 std::to_string(internal::kMaxRanks) + " ranks");
  if (bind != "auto" && bind != "none" && bind != "core")
    return usage("--bind '" + bind +
                 "' is not allowed; allowed: auto|none|core");
  options.bind_cores = bind == "core";
  if (bind == "auto") {
    // One rank per CPU: each gets its own (what mpirun does for small
    // jobs); more ranks than CPUs: none is bound, the kernel balances.
    cpu_set_t mask;
    CPU_ZERO(&mask);
    const int cpus = sched_getaffinity(0, sizeof(mask), &mask) == 0
                         ? CPU_COUNT(&mask)
                         : 1;
    options.bind_cores = options.ranks <= cpus;
  }
  if (!(options.kill_grace_s >= 0 && options.kill_grace_s <= 86400))
    return usage("--kill-grace " + std::to_string(options.kill_grace_s) +
                 " is out of range; allowed: 0..86400 seconds");
  if (app.count("--timeout") > 0) {
    if (!(timeout_s > 0 && timeout_s <= 86400 * 365))
      return usage("--timeout " + std::to_string(timeout_s) +
                   " is out of range; allowed: more than 0 seconds");
    options.timeout_s = timeout_s;
  }
  // The wrapper: the option, else the environment (where an empty value
  // means none, as unset).
  std::string wrapper_source = "--rank-wrapper";
  if (app.count("--rank-wrapper") == 0) {
    wrapper_text = rondo::base::ConfigRegistry::Global().GetString(
        "RONDO_RUN_RANK_WRAPPER");
    wrapper_source = "RONDO_RUN_RANK_WRAPPER";
  }
  if (app.count("--rank-wrapper") > 0 || !wrapper_text.empty()) {
    const std::string problem =
        SplitRankWrapper(wrapper_text, &options.rank_wrapper);
    if (!problem.empty())
      return usage("invalid " + wrapper_source + " '" + wrapper_text +
                   "': " + problem +
                   "; allowed: a command and its arguments, with {rank} "
                   "for the rank, e.g. 'ip netns exec host-{rank}'");
  }
  options.command = app.remaining();
  if (!options.command.empty() && options.command.front() == "--")
    options.command.erase(options.command.begin());
  if (options.command.empty())
    return usage("no program given; allowed: a program name or path, "
                 "then its arguments");
  Launcher launcher(std::move(options));
  return launcher.Run();
}

}  // namespace
}  // namespace rondo::drivers::bootstrap

int main(int argc, char** argv) {
  return rondo::drivers::bootstrap::Main(argc, argv);
}
