#include "bench/overlap/overlap_kernel.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "bench/common/tcp_floor.h"

using rondo::bench::TcpFloor;

// Rank 0 sends on `first` and receives on `second`; rank 1 the other way
// round, so that each direction has its own connection and helper thread
// and an exchange never waits for its own other half.
struct OvKernel {
  std::unique_ptr<TcpFloor> first, second;
  bool listener = false;
  bool sending = false, receiving = false;  // started, not yet waited
  TcpFloor* Out() const { return listener ? second.get() : first.get(); }
  TcpFloor* In() const { return listener ? first.get() : second.get(); }
};

namespace {

constexpr char kSeparator = ';';

int Error(char* err, size_t cap, const std::string& what) {
  if (err != nullptr && cap > 0) std::snprintf(err, cap, "%s", what.c_str());
  return -1;
}

}  // namespace

extern "C" OvKernel* ov_kernel_listen(char* address, size_t cap, char* err,
                                      size_t errcap) {
  try {
    auto k = std::make_unique<OvKernel>();
    k->listener = true;
    std::string a1, a2;
    k->first = TcpFloor::Listen(&a1);
    k->second = TcpFloor::Listen(&a2);
    const std::string both = a1 + kSeparator + a2;
    if (both.size() + 1 > cap) {
      Error(err, errcap,
            "the listening addresses take " + std::to_string(both.size() + 1) +
                " bytes, more than the " + std::to_string(cap) + " allowed");
      return nullptr;
    }
    std::snprintf(address, cap, "%s", both.c_str());
    return k.release();
  } catch (const std::exception& e) {
    Error(err, errcap, e.what());
    return nullptr;
  }
}

extern "C" int ov_kernel_accept(OvKernel* k, char* err, size_t errcap) {
  try {
    k->first->Accept();
    k->second->Accept();
    return 0;
  } catch (const std::exception& e) {
    return Error(err, errcap, e.what());
  }
}

extern "C" OvKernel* ov_kernel_connect(const char* address, char* err,
                                       size_t errcap) {
  try {
    const std::string both(address);
    const size_t cut = both.find(kSeparator);
    if (cut == std::string::npos) {
      Error(err, errcap,
            "'" + both + "' is not two addresses separated by ';'");
      return nullptr;
    }
    auto k = std::make_unique<OvKernel>();
    k->first = TcpFloor::Connect(both.substr(0, cut));
    k->second = TcpFloor::Connect(both.substr(cut + 1));
    return k.release();
  } catch (const std::exception& e) {
    Error(err, errcap, e.what());
    return nullptr;
  }
}

extern "C" int ov_kernel_start(OvKernel* k, const void* out, void* in,
                               size_t n, char* err, size_t errcap) {
  if (k->sending || k->receiving)
    return Error(err, errcap, "a transfer is already started");
  // The receive first: the peer's bytes may already be on their way.
  if (in != nullptr) {
    k->In()->Post(in, n, /*send=*/false);
    k->receiving = true;
  }
  if (out != nullptr) {
    k->Out()->Post(const_cast<void*>(out), n, /*send=*/true);
    k->sending = true;
  }
  return 0;
}

extern "C" int ov_kernel_wait(OvKernel* k, char* err, size_t errcap) {
  std::string error;
  for (auto [started, floor] : {std::pair{&k->sending, k->Out()},
                                std::pair{&k->receiving, k->In()}}) {
    if (!*started) continue;
    *started = false;
    try {
      floor->Wait();
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
  return error.empty() ? 0 : Error(err, errcap, error);
}

extern "C" void ov_kernel_free(OvKernel* k) { delete k; }
