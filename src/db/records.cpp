#include "db/records.hpp"

#include <fmt/format.h>

namespace fusetune::db {

// Stable text, not a hash: a person reading the database sees at once what differs between
// two environments. Changing the format orphans every stored result (winner() and
// top_results() match on it): tests/db_records_test.cpp pins it.
std::string Environment::fingerprint() const {
  return fmt::format("gpu={};cc={}.{};sms={};mem={};driver={};runtime={};nvrtc={};cudnn={};templates={}", gpu_name,
                     cc_major, cc_minor, sm_count, mem_bytes, driver, cuda_runtime, nvrtc, cudnn, templates_hash);
}

std::string Environment::hardware_fingerprint() const {
  return fmt::format("gpu={};cc={}.{};sms={};mem={};templates={}", gpu_name, cc_major, cc_minor, sm_count, mem_bytes,
                     templates_hash);
}

}  // namespace fusetune::db
