#pragma once
namespace fusetune::worker {
// Entry point of `fusetune __worker`: reads JSON requests on stdin, answers on stdout
// (see worker_client.hpp). Returns the process exit code.
int worker_main();
}  // namespace fusetune::worker
