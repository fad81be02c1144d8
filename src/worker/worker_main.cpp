#include "worker/worker_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "protocol/protocol.hpp"
#include "protocol/replies.hpp"
#include "worker/context_lost.hpp"
#include "worker/session.hpp"

namespace fusetune::worker {

namespace {

// The protocol owns the original stdout; anything a library prints goes to stderr instead,
// so it cannot corrupt a reply.
FILE* claim_protocol_channel() {
  const int fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return ::fdopen(fd, "w");
}

void send(FILE* out, const nlohmann::json& j) {
  const std::string s = j.dump() + "\n";
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int worker_main() {
  FILE* out = claim_protocol_channel();
  std::unique_ptr<Session> session;
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json reply;
    try {
      const auto req = nlohmann::json::parse(line);
      const std::string cmd = req.at("cmd");
      if (cmd == "device") {
        const auto info = gpu::query_device(protocol::device_request_from_json(req).device);
        reply = to_json(protocol::DeviceReply{.limits = info.limits,
                                              .name = info.name,
                                              .total_mem = info.total_mem,
                                              .driver_version = info.driver_version,
                                              .driver = gpu::driver_version_string(),
                                              .pci_bus_id = info.pci_bus_id,
                                              .count = gpu::device_count()});
      } else if (cmd == "setup") {
        session.reset();
        const auto t0 = Clock::now();
        session = std::make_unique<Session>(protocol::setup_request_from_json(req));
        protocol::SetupReply info = session->info();
        // The session times its own body; what came before it is the context, stream and handle.
        info.handles_s = std::max(0.0, since(t0) - info.setup_s);
        info.setup_s = since(t0);
        info.begun_s = std::chrono::duration<double>(t0.time_since_epoch()).count();
        reply = to_json(info);
      } else if (cmd == "run" || cmd == "retime") {
        if (!session) throw Error(ExitCode::failure, "worker: run before setup");
        reply = cmd == "run" ? to_json(session->run(protocol::run_request_from_json(req)))
                             : to_json(session->retime(protocol::retime_request_from_json(req)));
      } else if (cmd == "engines") {
        if (!session) throw Error(ExitCode::failure, "worker: engines before setup");
        reply = to_json(session->engines(protocol::engines_request_from_json(req)));
      } else if (cmd == "quit") {
        send(out, {{"ok", true}});
        return 0;
      } else {
        throw Error(ExitCode::failure, fmt::format("worker: unknown command '{}'", cmd));
      }
    } catch (const ContextLost& e) {
      // The context is gone for good; report and let the tuner start a fresh worker.
      send(out, to_json(protocol::FaultReply{e.reason}));
      std::_Exit(3);
    } catch (const Error& e) {
      reply = to_json(protocol::ErrorReply{e.what(), e.code()});
    } catch (const std::exception& e) {
      reply = to_json(protocol::ErrorReply{e.what(), ExitCode::failure});
    }
    send(out, reply);
  }
  return 0;
}

}  // namespace fusetune::worker
