// The safetensors reader: any bytes give a file or a heed::Error. A file that parses must
// serialize and parse back to the same tensors and metadata.
#include "fuzz_common.hpp"
#include "io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heed;
  if (fuzz::expect_errors_only([&] {
        const SafeTensorFile file = parse_safetensors(fuzz::text(data, size), "fuzz.safetensors");
        const SafeTensorFile again = parse_safetensors(serialize_safetensors(file), "round trip");
        if (again.metadata != file.metadata || again.tensors.size() != file.tensors.size())
          fuzz::broken("serialize does not parse back to the same file");
        for (const auto& [name, tensor] : file.tensors) {
          const SafeTensor& back = again.at(name);
          if (back.dtype != tensor.dtype || back.shape != tensor.shape || back.data != tensor.data)
            fuzz::broken("tensor " + name + " changed in a round trip");
          if (static_cast<size_t>(tensor.element_count()) * dtype_size(tensor.dtype) != tensor.data.size())
            fuzz::broken("tensor " + name + ": data size does not match its shape");
        }
      }))
    ++fuzz::accepted_inputs;
  return 0;
}
