// The float64 model reference against PyTorch's float64 answers: tests/data/model_reference_torch.txt
// holds problems of model v2 on small shapes, their fp32-exact inputs and what torch computed
// from them (written by python/tests/check_model_reference.py where torch is installed; CI has
// none, so the answers are committed). Every main operator and epilogue construct appears there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference/model_reference.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

struct TorchCase {
  std::string name, spec;
  ModelData data;
  std::vector<double> expect;
  spec::Shape shape;
};

// `TAG COUNT v1 v2 ...`: inputs as fp32 text (strtof gives back the exact float), answers as
// float64 text (strtod gives back the exact double).
template <class T>
std::vector<T> numbers(std::istringstream& in) {
  size_t count = 0;
  in >> count;
  std::vector<T> out(count);
  std::string word;
  for (T& v : out) {
    in >> word;
    if constexpr (std::is_same_v<T, float>) v = std::strtof(word.c_str(), nullptr);
    else v = std::strtod(word.c_str(), nullptr);
  }
  return out;
}

std::vector<TorchCase> read_cases() {
  std::ifstream file(std::string(FUSETUNE_SOURCE_DIR) + "/tests/data/model_reference_torch.txt");
  std::vector<TorchCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "case") {
      cases.emplace_back();
      in >> cases.back().name;
      continue;
    }
    TorchCase& c = cases.back();
    if (tag == "spec") c.spec = line.substr(5);
    else if (tag == "input") c.data.input = numbers<float>(in);
    else if (tag == "weight") c.data.weight = numbers<float>(in);
    else if (tag == "bias") c.data.bias = numbers<float>(in);
    else if (tag == "param") c.data.params.push_back(numbers<float>(in));
    else if (tag == "extra") c.data.inputs.push_back(numbers<float>(in));
    else if (tag == "expect") c.expect = numbers<double>(in);
    else if (tag == "shape") {
      int64_t d = 0;
      while (in >> d) c.shape.push_back(d);
    }
  }
  return cases;
}

TEST(ModelReferenceTorch, EveryCaseMatchesPyTorchInFloat64) {
  const std::vector<TorchCase> cases = read_cases();
  ASSERT_GE(cases.size(), 30U) << "tests/data/model_reference_torch.txt is missing or short";
  for (const TorchCase& c : cases) {
    SCOPED_TRACE(c.name + ": " + c.spec);
    const spec::Problem p = spec::parse(c.spec);
    // The sizes torch used are the ones the spec implies (param and input order included).
    ASSERT_NO_THROW(check_model_data(p, c.data));
    ASSERT_EQ(spec::out_shape(p), c.shape);
    const std::vector<double> got = model_reference(p, c.data);
    ASSERT_EQ(got.size(), c.expect.size());
    // Both sides are float64 with different summation orders and library functions: a few
    // ulps of the terms, far below any fp32 kernel's error.
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double err = std::fabs(got[i] - c.expect[i]);
      EXPECT_LE(err, 1e-12 * std::max(1.0, std::fabs(c.expect[i]))) << "element " << i;
      if (err > 0.0) worst = std::max(worst, err / std::max(std::fabs(c.expect[i]), 1e-300));
    }
    std::printf("  %-36s %4zu values, max relative difference %.2e\n", c.name.c_str(), got.size(), worst);
  }
}

}  // namespace
}  // namespace fusetune::reference
