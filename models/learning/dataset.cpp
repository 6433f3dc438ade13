// SPDX-License-Identifier: MIT
#include "learning/dataset.h"

#include <zlib.h>

#include <array>
#include <filesystem>
#include <memory>
#include <utility>

namespace fastsim::learning {
namespace {

constexpr std::uint32_t kImageMagic = 0x00000803;
constexpr std::uint32_t kLabelMagic = 0x00000801;

/// A gzip (or plain) file read whole through zlib; DatasetError names the file.
class GzipFile {
public:
    explicit GzipFile(const std::string& path) : m_path(path) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throw DatasetError(path +
                               ": no such file (Fashion-MNIST comes from the Debian package "
                               "dataset-fashion-mnist, which `bash scripts/setup.sh` installs)");
        m_file = gzopen(path.c_str(), "rb");
        if (m_file == nullptr) throw DatasetError(path + ": cannot open");
    }
    GzipFile(const GzipFile&) = delete;
    GzipFile& operator=(const GzipFile&) = delete;
    ~GzipFile() { gzclose(m_file); }

    /// Exactly `bytes` bytes, or DatasetError saying what `what` was cut short.
    void read(void* out, std::size_t bytes, const std::string& what) {
        auto* p = static_cast<unsigned char*>(out);
        while (bytes > 0) {
            const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes, 1u << 30));
            const int got = gzread(m_file, p, chunk);
            if (got < 0) fail();
            if (got == 0) throw DatasetError(m_path + ": file ends inside the " + what + " (truncated download?)");
            p += got;
            bytes -= static_cast<std::size_t>(got);
        }
    }

    /// Exactly `bytes` bytes appended to a vector that grows only as data arrives, so a header
    /// that announces more than the file holds never turns into an allocation of that size.
    std::vector<unsigned char> read_vector(std::size_t bytes, const std::string& what) {
        constexpr std::size_t kChunk = std::size_t{1} << 20;
        std::vector<unsigned char> out;
        while (out.size() < bytes) {
            const std::size_t at = out.size();
            out.resize(at + std::min(kChunk, bytes - at));
            read(out.data() + at, out.size() - at, what);
        }
        return out;
    }

    std::uint32_t read_u32(const std::string& what) {
        std::array<unsigned char, 4> b{};
        read(b.data(), b.size(), what);
        return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    }

    /// DatasetError if any byte is left after the data the header announced.
    void expect_end() {
        unsigned char extra = 0;
        const int got = gzread(m_file, &extra, 1);
        if (got < 0) fail();
        if (got > 0) throw DatasetError(m_path + ": bytes after the data the IDX header announces (corrupt file?)");
    }

    [[nodiscard]] const std::string& path() const { return m_path; }

private:
    [[noreturn]] void fail() {
        int code = 0;
        const char* message = gzerror(m_file, &code);
        throw DatasetError(m_path + ": gzip error: " + (message ? message : "unknown") + " (corrupt file?)");
    }

    std::string m_path;
    gzFile m_file = nullptr;
};

std::uint32_t read_magic(GzipFile& file, std::uint32_t expected, const char* kind) {
    const std::uint32_t magic = file.read_u32("IDX header");
    if (magic != expected) {
        char text[64];
        std::snprintf(text, sizeof text, "0x%08x, expected 0x%08x", magic, expected);
        throw DatasetError(file.path() + ": not an IDX " + kind + " file (magic " + text + ")");
    }
    return magic;
}

}  // namespace

Dataset load_idx(const std::string& images_path, const std::string& labels_path, std::size_t limit) {
    GzipFile images(images_path);
    read_magic(images, kImageMagic, "image");
    const std::uint32_t count = images.read_u32("IDX header");
    const std::uint32_t height = images.read_u32("IDX header");
    const std::uint32_t width = images.read_u32("IDX header");
    if (count == 0) throw DatasetError(images_path + ": the IDX header announces no images");
    if (height == 0 || width == 0 || height > 4096 || width > 4096)
        throw DatasetError(images_path + ": implausible image size " + std::to_string(height) + " x " +
                           std::to_string(width));

    // Fashion-MNIST holds 70,000 images; a header announcing over 2^31 bytes is corrupt, and
    // must not become an allocation of that size.
    if (static_cast<std::uint64_t>(count) * height * width > (std::uint64_t{1} << 31))
        throw DatasetError(images_path + ": the IDX header announces " + std::to_string(count) + " images of " +
                           std::to_string(height) + " x " + std::to_string(width) + " (corrupt file?)");

    GzipFile labels(labels_path);
    read_magic(labels, kLabelMagic, "label");
    const std::uint32_t label_count = labels.read_u32("IDX header");
    if (label_count != count)
        throw DatasetError(labels_path + ": " + std::to_string(label_count) + " labels for the " +
                           std::to_string(count) + " images of " + images_path);

    Dataset d;
    d.height = height;
    d.width = width;
    d.count = limit == 0 ? count : std::min<std::size_t>(limit, count);
    const std::vector<unsigned char> pixels =
        images.read_vector(static_cast<std::size_t>(count) * d.pixels(), "pixel data");
    images.expect_end();
    const std::vector<unsigned char> raw_labels = labels.read_vector(count, "label data");
    labels.expect_end();

    d.images.resize(d.count * d.pixels());
    for (std::size_t i = 0; i < d.images.size(); ++i)
        d.images[i] = (static_cast<float>(pixels[i]) / 255.0f - kPixelMean) / kPixelStd;
    d.labels.assign(raw_labels.begin(), raw_labels.begin() + static_cast<std::ptrdiff_t>(d.count));
    for (std::size_t i = 0; i < count; ++i)
        if (raw_labels[i] >= kClasses)
            throw DatasetError(labels_path + ": label " + std::to_string(raw_labels[i]) + " of sample " +
                               std::to_string(i) + " is not a class 0..9");
    return d;
}

FashionMnist load_fashion_mnist(const std::string& dir, std::size_t train_limit, std::size_t test_limit) {
    const std::filesystem::path base(dir);
    FashionMnist data;
    data.train = load_idx((base / "train-images-idx3-ubyte.gz").string(),
                          (base / "train-labels-idx1-ubyte.gz").string(), train_limit);
    data.test = load_idx((base / "t10k-images-idx3-ubyte.gz").string(), (base / "t10k-labels-idx1-ubyte.gz").string(),
                         test_limit);
    for (const auto& [split, file] :
         {std::pair{&data.train, "train-images-idx3-ubyte.gz"}, std::pair{&data.test, "t10k-images-idx3-ubyte.gz"}})
        if (split->height != 28 || split->width != 28)
            throw DatasetError((base / file).string() + ": images are " + std::to_string(split->height) + " x " +
                               std::to_string(split->width) + ", the networks take 28 x 28");
    return data;
}

}  // namespace fastsim::learning
