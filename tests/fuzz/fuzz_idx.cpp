// SPDX-License-Identifier: MIT
// The Fashion-MNIST IDX reader: the input is split into an image file and a label file (at the
// offset its first 4 bytes give), each gzip-compressed here so the fuzzer mutates the IDX bytes
// themselves, not the compression.
#include <zlib.h>

#include <cstring>

#include "fuzz_support.h"
#include "learning/dataset.h"

namespace {

void write_gzip(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (size > 0) gzwrite(f, data, static_cast<unsigned>(size));
    gzclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    if (size < 4) return 0;
    std::uint32_t split = 0;
    std::memcpy(&split, data, 4);
    data += 4;
    size -= 4;
    split = size == 0 ? 0 : split % static_cast<std::uint32_t>(size + 1);
    const auto dir = fuzz::scratch() / "idx";
    std::filesystem::create_directories(dir);
    write_gzip(dir / "images.gz", data, split);
    write_gzip(dir / "labels.gz", data + split, size - split);
    try {
        (void)learning::load_idx((dir / "images.gz").string(), (dir / "labels.gz").string(), 0);
    } catch (const learning::DatasetError&) {  // what fastsim train reports as a data error (exit 2)
    }
    return 0;
}
