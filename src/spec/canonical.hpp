#pragma once
// The canonical form of a problem: what is printed and stored, and whose hash is the
// problem key. Every default is written out, keys come in a fixed order, numbers use
// the shortest form that reads back to the same double, stages are joined by " | ":
//   conv2d(n=128,c=64,h=128,w=128,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,
//          in=nchw,out=nchw) | min(0.5) | add(param[k]) | mul(2)      (one line)
// parse(canonical(p)) gives back p, so canonical(parse(text)) is idempotent.
#include <string>

#include "spec/problem.hpp"

namespace fusetune::spec {

std::string canonical(const Problem& problem);

// 16 lowercase hex digits: 64-bit FNV-1a of canonical(problem). Stored in the tuning
// database, so changing canonical() or this hash invalidates stored keys.
std::string problem_key(const Problem& problem);

}  // namespace fusetune::spec
