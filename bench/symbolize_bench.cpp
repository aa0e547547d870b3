// Symbolization throughput: 10,000 unique addresses per iteration, with a fresh Symbolizer each
// time (so opening the files, indexing the DWARF and the lookups are all counted). The design
// goal: 10,000 unique frames symbolized in under 1 s.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "symbolize/symbolizer.h"
#include "symbolize/testing_modules.h"

namespace memtrack::symbolize {
namespace {

constexpr size_t kAddresses = 10000;

// `count` addresses spread evenly over the executable segment of `module`.
std::vector<uint64_t> spread(const LoadedModule& module, size_t count) {
  std::vector<uint64_t> addresses;
  uint64_t size = module.text_end - module.text_start;
  uint64_t step = std::max<uint64_t>(1, size / count);
  for (uint64_t a = module.text_start + 1; a < module.text_end && addresses.size() < count;
       a += step) {
    addresses.push_back(a);
  }
  return addresses;
}

void run(benchmark::State& state, const std::vector<RawModule>& modules,
         const std::vector<uint64_t>& addresses) {
  size_t frames = 0;
  for (auto _ : state) {
    Symbolizer symbolizer(modules);
    frames = 0;
    for (uint64_t address : addresses) frames += symbolizer.symbolize(address, true).size();
    benchmark::DoNotOptimize(frames);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * addresses.size()));
  state.counters["addresses"] = static_cast<double>(addresses.size());
  state.counters["frames"] = static_cast<double>(frames);
}

// A library with DWARF: 2,000 -O2 -g functions with inlined helpers (generated at configure
// time, see bench/CMakeLists.txt); every lookup yields the inline chain and file:line:column.
void BM_Symbolize10kWithDebugInfo(benchmark::State& state) {
  if (dlopen(SYMBENCH_LIB, RTLD_NOW | RTLD_LOCAL) == nullptr) {
    state.SkipWithError(dlerror());
    return;
  }
  std::optional<LoadedModule> lib = test_only_find_loaded_at(SYMBENCH_LIB);
  if (!lib) {
    state.SkipWithError("benchmark library not found among the loaded objects");
    return;
  }
  run(state, {lib->module}, spread(*lib, kAddresses));
}
BENCHMARK(BM_Symbolize10kWithDebugInfo)->Unit(benchmark::kMillisecond);

// The system's libc and libstdc++, half of the addresses in each: libstdc++ has only its
// symbol table; libc has DWARF too if libc6-dbg is installed (compressed, found by build-id
// under /usr/lib/debug), which makes this case mostly the cost of reading that.
void BM_Symbolize10kSystemLibraries(benchmark::State& state) {
  std::vector<RawModule> modules;
  std::vector<uint64_t> addresses;
  for (const char* name : {"/libc.so.6", "/libstdc++.so.6"}) {
    std::optional<LoadedModule> lib = test_only_find_loaded(
        [name](const std::string& path) { return path.find(name) != std::string::npos; });
    if (!lib) {
      state.SkipWithError((std::string(name) + " is not loaded").c_str());
      return;
    }
    modules.push_back(lib->module);
    std::vector<uint64_t> some = spread(*lib, kAddresses / 2);
    addresses.insert(addresses.end(), some.begin(), some.end());
  }
  run(state, modules, addresses);
}
BENCHMARK(BM_Symbolize10kSystemLibraries)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace memtrack::symbolize
