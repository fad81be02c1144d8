#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/error.hpp"
#include "db/database.hpp"

namespace fusetune::db {

namespace {

std::string env_var(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::string default_db_path() {
  if (std::string p = env_var("FUSETUNE_DB"); !p.empty()) return p;
  // XDG: a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (std::string cache = env_var("XDG_CACHE_HOME"); !cache.empty() && cache.front() == '/')
    return cache + "/fusetune/tuning.db";
  std::string home = env_var("HOME");
  if (home.empty()) {
    // Services and containers sometimes run without HOME; the password database knows.
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) home = pw->pw_dir;
  }
  if (home.empty()) throw InputError("no place for the tuning database: set FUSETUNE_DB or HOME, or pass --db");
  return home + "/.cache/fusetune/tuning.db";
}

}  // namespace fusetune::db
