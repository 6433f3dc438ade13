// SPDX-License-Identifier: MIT
#include "learning/network.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "learning/dataset.h"

namespace fastsim::learning {

TensorClass tensor_class(Operand operand) {
    switch (operand) {
    case Operand::weights_forward:
    case Operand::weights_backward: return TensorClass::weights;
    case Operand::activations_forward:
    case Operand::activations_wgrad: return TensorClass::activations;
    case Operand::gradients_backward:
    case Operand::gradients_wgrad: return TensorClass::gradients;
    }
    return TensorClass::weights;
}

const EnumNames<NetworkKind, 2>& enum_names(NetworkKind) {
    static constexpr EnumNames<NetworkKind, 2> kNames{{{"mlp", NetworkKind::mlp}, {"cnn", NetworkKind::cnn}}};
    return kNames;
}

void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
    constexpr std::size_t kBlock = 32;  // 32 x 32 blocks: both sides stay in L1
    for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
        for (std::size_t c0 = 0; c0 < cols; c0 += kBlock) {
            const std::size_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
            std::size_t r = r0;
#ifdef __SSE2__
            for (; r + 4 <= r1; r += 4) {  // 4 x 4 tiles in registers, then the columns left over
                std::size_t c = c0;
                for (; c + 4 <= c1; c += 4) {
                    __m128 row0 = _mm_loadu_ps(in + r * cols + c), row1 = _mm_loadu_ps(in + (r + 1) * cols + c);
                    __m128 row2 = _mm_loadu_ps(in + (r + 2) * cols + c), row3 = _mm_loadu_ps(in + (r + 3) * cols + c);
                    _MM_TRANSPOSE4_PS(row0, row1, row2, row3);
                    _mm_storeu_ps(out + c * rows + r, row0);
                    _mm_storeu_ps(out + (c + 1) * rows + r, row1);
                    _mm_storeu_ps(out + (c + 2) * rows + r, row2);
                    _mm_storeu_ps(out + (c + 3) * rows + r, row3);
                }
                for (; c < c1; ++c)
                    for (std::size_t i = r; i < r + 4; ++i) out[c * rows + i] = in[i * cols + c];
            }
#endif
            for (; r < r1; ++r)
                for (std::size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
        }
}

namespace {

void init_parameters(Parameters& p, std::size_t out, std::size_t fan_in, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / static_cast<float>(fan_in)));
    p.weights.resize(out * fan_in);
    for (float& w : p.weights) w = normal(rng);
    p.bias.assign(out, 0.0f);
    p.weight_grad.assign(p.weights.size(), 0.0f);
    p.bias_grad.assign(out, 0.0f);
    p.weight_velocity.assign(p.weights.size(), 0.0f);
    p.bias_velocity.assign(out, 0.0f);
}

/// The shared GEMM step of both weighted layers, on row-major matrices:
/// forward Y (m x out) = A (m x in) W^T; backward dA = G W and dW = G^T A. BFP operands are
/// transposed where needed so that every group is contiguous along the GEMM's k.
class GemmLayer : public Layer {
protected:
    GemmLayer(std::size_t index, std::size_t out, std::size_t fan_in) : m_index(index), m_out(out), m_fan_in(fan_in) {}

    void gemm_forward(const float* a, std::size_t m, float* y, GemmContext& ctx) {
        ctx.show(m_index, TensorClass::weights, m_params.weights.data(), m_params.weights.size());
        gemm_abt(ctx.path, a, m_params.weights.data(), m, m_out, m_fan_in,
                 ctx.quantizer(m_index, Operand::activations_forward), ctx.quantizer(m_index, Operand::weights_forward),
                 y, ctx.scratch);
    }

    /// W (out x in, grouped along in) prepared for forward GEMMs Y^T = W A^T against slices
    /// of A: the forward GEMM with the output transposed (the same products and the same
    /// quantisation as gemm_forward).
    void prepare_weights_forward(GemmOperand& w, GemmContext& ctx) {
        ctx.show(m_index, TensorClass::weights, m_params.weights.data(), m_params.weights.size());
        w.prepare(ctx.path, stored_rows(m_params.weights.data(), m_out), m_fan_in,
                  ctx.quantizer(m_index, Operand::weights_forward));
    }

    /// `g` is m x out; writes dW (and dA if `da`).
    void gemm_backward(const float* a, const float* g, std::size_t m, float* da, GemmContext& ctx) {
        ctx.show(m_index, TensorClass::gradients, g, m * m_out);
        if (da != nullptr && ctx.quantizers == nullptr) {
            sgemm_ab(g, m_params.weights.data(), m, m_fan_in, m_out, da);  // fp32: W as it is
        } else if (da != nullptr) {
            transpose_weights();
            gemm_abt(ctx.path, g, m_wt.data(), m, m_fan_in, m_out, ctx.quantizer(m_index, Operand::gradients_backward),
                     ctx.quantizer(m_index, Operand::weights_backward), da, ctx.scratch);
        }
        bfp::Quantizer* qg = ctx.quantizer(m_index, Operand::gradients_wgrad);
        bfp::Quantizer* qa = ctx.quantizer(m_index, Operand::activations_wgrad);
        if (qg == nullptr && qa == nullptr) {
            sgemm_atb(g, a, m_out, m_fan_in, m, m_params.weight_grad.data());  // fp32: no transposes needed
        } else {
            // Both operands grouped along the batch: transposed, so each group is contiguous.
            m_gt.resize(m * m_out);
            transpose(g, m, m_out, m_gt.data());
            m_at.resize(m * m_fan_in);
            transpose(a, m, m_fan_in, m_at.data());
            gemm_weight_gradient(stored_rows(m_gt.data(), m_out), stored_rows(m_at.data(), m_fan_in), m, ctx);
        }
        std::fill(m_params.bias_grad.begin(), m_params.bias_grad.end(), 0.0f);
        for (std::size_t r = 0; r < m; ++r)
            for (std::size_t j = 0; j < m_out; ++j) m_params.bias_grad[j] += g[r * m_out + j];
    }

    /// W^T (in x out, grouped along out) prepared for backward-data GEMMs dA^T = W^T G^T
    /// against slices of G (m x out): the backward-data GEMM with the output transposed.
    void prepare_weights_backward(GemmOperand& wt, GemmContext& ctx) {
        transpose_weights();
        wt.prepare(ctx.path, stored_rows(m_wt.data(), m_fan_in), m_out,
                   ctx.quantizer(m_index, Operand::weights_backward));
    }

    /// dW (out x in) = G^T A from G^T (out x m) and A^T (in x m), both grouped along m.
    void gemm_weight_gradient(const RowSource& gt, const RowSource& at, std::size_t m, GemmContext& ctx) {
        gemm_abt(ctx.path, gt, at, m, ctx.quantizer(m_index, Operand::gradients_wgrad),
                 ctx.quantizer(m_index, Operand::activations_wgrad), m_params.weight_grad.data(), ctx.scratch);
    }

    void transpose_weights() {
        m_wt.resize(m_params.weights.size());
        transpose(m_params.weights.data(), m_out, m_fan_in, m_wt.data());
    }

    std::size_t m_index, m_out, m_fan_in;
    Parameters m_params;
    std::vector<float> m_wt, m_gt, m_at;

public:
    Parameters* parameters() override { return &m_params; }
};

class Dense final : public GemmLayer {
public:
    Dense(std::string name, std::size_t index, int in, int out, std::mt19937_64& rng)
        : GemmLayer(index, static_cast<std::size_t>(out), static_cast<std::size_t>(in)), m_name(std::move(name)) {
        init_parameters(m_params, m_out, m_fan_in, rng);
    }

    void forward(const Activation& in, Activation& out, GemmContext& ctx) override {
        if (in.features() != m_fan_in) throw std::logic_error(m_name + ": input has the wrong size");
        ctx.show(m_index, TensorClass::activations, in.data.data(), in.data.size());
        out.reshape(in.batch, static_cast<int>(m_out), 1, 1);
        gemm_forward(in.data.data(), in.batch, out.data.data(), ctx);
        for (std::size_t r = 0; r < in.batch; ++r)
            for (std::size_t j = 0; j < m_out; ++j) out.data[r * m_out + j] += m_params.bias[j];
    }

    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext& ctx) override {
        if (grad_in != nullptr) grad_in->reshape(in.batch, in.channels, in.height, in.width);
        gemm_backward(in.data.data(), grad_out.data.data(), in.batch, grad_in ? grad_in->data.data() : nullptr, ctx);
    }

    [[nodiscard]] std::optional<GemmLayerShape> gemm_shape() const override {
        GemmLayerShape s;
        s.name = m_name;
        s.in_features = static_cast<int>(m_fan_in);
        s.out_features = static_cast<int>(m_out);
        return s;
    }

private:
    std::string m_name;
};

/// Stride-1 convolution with zero padding, lowered to GEMMs over the im2col matrix A: rows
/// (b, oy, ox), columns (c, ky, kx), so W is filters x (C k k). Each GEMM is laid out so that
/// no operand is transposed in memory and the output lands in the layout its consumer reads:
///   forward          Y^T (filters x rows) = W A^T, A built row by row (grouped along C k k)
///   backward-data    dA^T (C k k x rows) = W^T G^T, G (rows x filters) grouped along filters
///   weight gradient  dW (filters x C k k) = G^T A, G^T and A^T built directly (grouped along rows)
/// Every operand holds the values, in the order, that the row-major GEMMs of the Dense layer
/// would quantise, so the LFSR draws and the results are those of the plain lowering.
/// The forward and backward-data GEMMs run a slice of the batch's images at a time (W
/// quantised once), so that A, dA^T and their quantised copies stay in cache. Slicing keeps
/// the order of the draws, and on the exact path every output's sum; OpenBLAS (the fast and
/// fp32 paths) may sum some outputs in another order. The weight gradient sums over the whole
/// batch and runs whole.
class Conv2d final : public GemmLayer {
public:
    Conv2d(std::string name, std::size_t index, int channels, int height, int width, int filters, int kernel,
           int padding, std::mt19937_64& rng)
        : GemmLayer(index, static_cast<std::size_t>(filters),
                    static_cast<std::size_t>(channels) * static_cast<std::size_t>(kernel * kernel)),
          m_name(std::move(name)),
          m_channels(channels),
          m_height(height),
          m_width(width),
          m_kernel(kernel),
          m_padding(padding),
          m_out_height(height + 2 * padding - kernel + 1),
          m_out_width(width + 2 * padding - kernel + 1) {
        if (channels < 1 || height < 1 || width < 1 || filters < 1 || kernel < 1 || padding < 0 || m_out_height < 1 ||
            m_out_width < 1)
            throw std::invalid_argument(m_name +
                                        ": a convolution needs positive sizes and a kernel no larger than "
                                        "the padded input");
        init_parameters(m_params, m_out, m_fan_in, rng);
        build_inside();
    }

    void forward(const Activation& in, Activation& out, GemmContext& ctx) override {
        if (in.channels != m_channels || in.height != m_height || in.width != m_width)
            throw std::logic_error(m_name + ": input has the wrong shape");
        ctx.show(m_index, TensorClass::activations, in.data.data(), in.data.size());
        pad_input(in);
        out.reshape(in.batch, static_cast<int>(m_out), m_out_height, m_out_width);
        GemmOperand& weights = ctx.scratch.a;
        prepare_weights_forward(weights, ctx);
        bfp::Quantizer* q = ctx.quantizer(m_index, Operand::activations_forward);
        const auto fill = m_kernel == 3 ? &Conv2d::fill_a<3> : &Conv2d::fill_a<0>;
        const std::size_t pixels = pixels_out(), slice = images_per_slice();
        m_y.resize(std::min(slice, in.batch) * pixels * m_out);
        for (std::size_t first = 0; first < in.batch; first += slice) {
            const std::size_t images = std::min(slice, in.batch - first), rows = images * pixels;
            ctx.scratch.bt.prepare(ctx.path,
                                   {rows, nullptr,
                                    [&](std::size_t row, std::size_t count, float* to) {
                                        (this->*fill)(first * pixels + row, count, to);
                                    }},
                                   m_fan_in, q);
            gemm_abt(weights, ctx.scratch.bt, m_y.data());  // Y^T of the slice: filters x rows
            for (std::size_t b = 0; b < images; ++b)
                for (std::size_t f = 0; f < m_out; ++f) {
                    const float* from = &m_y[f * rows + b * pixels];
                    float* to = &out.data[((first + b) * m_out + f) * pixels];
                    const float bias = m_params.bias[f];
                    for (std::size_t p = 0; p < pixels; ++p) to[p] = from[p] + bias;
                }
        }
    }

    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext& ctx) override {
        const std::size_t pixels = pixels_out(), rows = in.batch * pixels;
        if (ctx.observing()) {  // G (rows x filters) as the plain lowering holds it
            m_g.resize(rows * m_out);
            transpose_planes(grad_out, 0, in.batch, m_g.data());
            ctx.show(m_index, TensorClass::gradients, m_g.data(), rows * m_out);
        }
        if (grad_in != nullptr) backward_data(grad_out, *grad_in, ctx);
        const RowSource gt{m_out, nullptr, [&](std::size_t first, std::size_t count, float* to) {
                               // filter f's row: the concatenation over b of grad_out's plane (b, f)
                               for (std::size_t f = first; f < first + count; ++f, to += rows)
                                   for (std::size_t b = 0; b < in.batch; ++b)
                                       std::copy_n(&grad_out.data[(b * m_out + f) * pixels], pixels, to + b * pixels);
                           }};
        const RowSource at{m_fan_in, nullptr, [&](std::size_t first, std::size_t count, float* to) {
                               fill_a_transposed(in, first, count, to);
                           }};
        gemm_weight_gradient(gt, at, rows, ctx);
        bias_gradient(grad_out, in.batch);
    }

    [[nodiscard]] std::optional<GemmLayerShape> gemm_shape() const override {
        GemmLayerShape s;
        s.name = m_name;
        s.conv = true;
        s.in_channels = m_channels;
        s.in_height = m_height;
        s.in_width = m_width;
        s.filters = static_cast<int>(m_out);
        s.kernel = m_kernel;
        s.padding = m_padding;
        return s;
    }

private:
    [[nodiscard]] std::size_t pixels_out() const {
        return static_cast<std::size_t>(m_out_height) * static_cast<std::size_t>(m_out_width);
    }

    /// Images per slice of the forward and backward-data GEMMs: the slices of A, Y^T, G and
    /// dA^T hold at most kSliceFloats floats each (at least one image).
    [[nodiscard]] std::size_t images_per_slice() const {
        constexpr std::size_t kSliceFloats = std::size_t{1} << 16;  // 256 KiB: L2 holds it and its copies
        return std::max<std::size_t>(1, kSliceFloats / (pixels_out() * std::max(m_fan_in, m_out)));
    }

    /// G's rows of images first .. first + images - 1 (each image's planes transposed:
    /// pixels x filters), into `to`.
    void transpose_planes(const Activation& grad_out, std::size_t first, std::size_t images, float* to) const {
        const std::size_t plane_floats = m_out * pixels_out();
        for (std::size_t b = first; b < first + images; ++b, to += plane_floats)
            transpose(&grad_out.data[b * plane_floats], m_out, pixels_out(), to);
    }

    /// grad_in = col2im(dA^T), dA^T = W^T G^T computed a slice of images at a time.
    void backward_data(const Activation& grad_out, Activation& grad_in, GemmContext& ctx) {
        grad_in.reshape(grad_out.batch, m_channels, m_height, m_width);
        std::fill(grad_in.data.begin(), grad_in.data.end(), 0.0f);
        GemmOperand& weights = ctx.scratch.a;
        prepare_weights_backward(weights, ctx);
        bfp::Quantizer* q = ctx.quantizer(m_index, Operand::gradients_backward);
        const std::size_t pixels = pixels_out(), slice = std::min(images_per_slice(), grad_out.batch);
        m_g_slice.resize(slice * pixels * m_out);
        m_dcols.resize(m_fan_in * slice * pixels);
        for (std::size_t first = 0; first < grad_out.batch; first += slice) {
            const std::size_t images = std::min(slice, grad_out.batch - first), rows = images * pixels;
            transpose_planes(grad_out, first, images, m_g_slice.data());
            ctx.scratch.bt.prepare(ctx.path, stored_rows(m_g_slice.data(), rows), m_out, q);
            gemm_abt(weights, ctx.scratch.bt, m_dcols.data());  // dA^T of the slice: C k k x rows
            col2im(grad_in, first, images);
        }
    }

    /// m_padded = the input with p zeros around each plane: (H + 2p) x (W + 2p) planes.
    void pad_input(const Activation& in) {
        const auto ph = static_cast<std::size_t>(m_height + 2 * m_padding),
                   pw = static_cast<std::size_t>(m_width + 2 * m_padding);
        const auto p = static_cast<std::size_t>(m_padding), w = static_cast<std::size_t>(m_width);
        m_padded.assign(in.batch * static_cast<std::size_t>(m_channels) * ph * pw + 1,
                        0.0f);  // + 1: slack for fill_a<3>'s 4-float reads
        for (std::size_t plane = 0; plane < in.batch * static_cast<std::size_t>(m_channels); ++plane)
            for (std::size_t y = 0; y < static_cast<std::size_t>(m_height); ++y)
                std::copy_n(&in.data[(plane * static_cast<std::size_t>(m_height) + y) * w], w,
                            &m_padded[(plane * ph + y + p) * pw + p]);
    }

    /// Rows first .. first + count - 1 of A (rows x C k k) from m_padded: row (b, oy, ox),
    /// column (c, ky, kx) holds padded input (b, c, oy + ky, ox + kx). K is the kernel size
    /// when it is known at compile time, else 0.
    template <int K>
    void fill_a(std::size_t first, std::size_t count, float* row) const {
        const int k = K != 0 ? K : m_kernel;
        const std::size_t pixels = pixels_out(), width_out = static_cast<std::size_t>(m_out_width);
        const auto ph = static_cast<std::size_t>(m_height + 2 * m_padding),
                   pw = static_cast<std::size_t>(m_width + 2 * m_padding);
        const std::size_t channels = static_cast<std::size_t>(m_channels);
        std::size_t b = first / pixels, oy = first % pixels / width_out, ox = first % pixels % width_out;
        for (std::size_t r = first; r < first + count; ++r) {
            const std::size_t first_window = ((b * channels) * ph + oy) * pw + ox;
            if (++ox == width_out) {  // (b, oy, ox) of row r + 1
                ox = 0;
                if (++oy == static_cast<std::size_t>(m_out_height)) {
                    oy = 0;
                    ++b;
                }
            }
            for (std::size_t c = 0; c < channels; ++c) {
                const float* window = m_padded.data() + first_window + c * ph * pw;
                for (int ky = 0; ky < k; ++ky, row += k) {
                    const float* from = window + static_cast<std::size_t>(ky) * pw;
                    if constexpr (K == 3) {
                        // One 4-float copy: the 4th float lands where the next copy starts, and
                        // is overwritten by it; only the call's very last copy must not spill.
                        // The 4th float read lies inside m_padded except for the last row of A,
                        // whose last copy is a call's last.
                        if (r + 1 == first + count && c + 1 == channels && ky + 1 == k)
                            std::copy_n(from, 3, row);
                        else
                            std::memcpy(row, from, 4 * sizeof(float));
                    } else {
                        for (int kx = 0; kx < k; ++kx) row[kx] = from[kx];
                    }
                }
            }
        }
    }

    /// Calls visit(b, c, y, oy, x_first, ox_first, count) for every run of A^T's row (c, ky, kx)
    /// in images first_image .. end_image - 1 that lies inside the input: columns
    /// (b, oy, ox_first .. +count) read input (b, c, y = oy+ky-p, x_first .. +count). Runs skip
    /// the padding.
    template <typename Visit>
    void for_each_inside_run(std::size_t first_image, std::size_t end_image, int c, int ky, int kx,
                             Visit&& visit) const {
        const int ox_first = std::max(0, m_padding - kx);
        const int ox_last = std::min(m_out_width, m_width + m_padding - kx);  // exclusive
        if (ox_last <= ox_first) return;
        for (std::size_t b = first_image; b < end_image; ++b)
            for (int oy = 0; oy < m_out_height; ++oy) {
                const int y = oy + ky - m_padding;
                if (y < 0 || y >= m_height) continue;
                visit(b, c, y, oy, ox_first + kx - m_padding, ox_first, ox_last - ox_first);
            }
    }

    [[nodiscard]] std::size_t input_index(std::size_t b, int c, int y, int x) const {
        return ((b * static_cast<std::size_t>(m_channels) + static_cast<std::size_t>(c)) *
                    static_cast<std::size_t>(m_height) +
                static_cast<std::size_t>(y)) *
                   static_cast<std::size_t>(m_width) +
               static_cast<std::size_t>(x);
    }
    [[nodiscard]] std::size_t column_index(std::size_t b, int oy, int ox) const {
        return b * pixels_out() + static_cast<std::size_t>(oy) * static_cast<std::size_t>(m_out_width) +
               static_cast<std::size_t>(ox);
    }

    /// Rows first .. first + count - 1 of A^T (C k k x rows), built run by run, zeros between.
    void fill_a_transposed(const Activation& in, std::size_t first, std::size_t count, float* to) const {
        const std::size_t rows = in.batch * pixels_out();
        for (std::size_t r = first; r < first + count; ++r, to += rows) {
            const int c = static_cast<int>(r) / (m_kernel * m_kernel), ky = static_cast<int>(r) / m_kernel % m_kernel,
                      kx = static_cast<int>(r) % m_kernel;
            if (m_out_width == m_width) {
                fill_a_transposed_planes(in, c, ky, kx, to);
                continue;
            }
            std::size_t written = 0;
            for_each_inside_run(0, in.batch, c, ky, kx,
                                [&](std::size_t b, int ch, int y, int oy, int x, int ox, int n) {
                                    const std::size_t at = column_index(b, oy, ox);
                                    std::fill(to + written, to + at, 0.0f);
                                    std::copy_n(&in.data[input_index(b, ch, y, x)], n, to + at);
                                    written = at + static_cast<std::size_t>(n);
                                });
            std::fill(to + written, to + rows, 0.0f);
        }
    }

    /// Row (c, ky, kx) of A^T when output and input rows are equally wide: each image's
    /// segment is input plane (b, c) read at one flat offset, (ky - p) W + (kx - p), the outputs
    /// whose x falls outside the input (m_inside[kx] is 0) and the rows above and below the
    /// input +0, as in fill_a_transposed's runs. The mirror of col2im_planes.
    void fill_a_transposed_planes(const Activation& in, int c, int ky, int kx, float* to) const {
        const std::size_t pixels = pixels_out();
        const PlaneSpan span = plane_span(ky, kx);
        const std::uint32_t* __restrict inside = &m_inside[static_cast<std::size_t>(kx) * pixels];
        for (std::size_t b = 0; b < in.batch; ++b) {
            float* __restrict segment = to + b * pixels;
            const float* __restrict from = &in.data[input_index(b, c, 0, 0)] + span.offset;
            std::fill(segment, segment + span.begin, 0.0f);
            for (std::size_t i = span.begin; i < span.end; ++i) {
                const float value = from[i];  // read unconditionally: the loop vectorises
                segment[i] = inside[i] != 0 ? value : 0.0f;
            }
            std::fill(segment + span.end, segment + pixels, 0.0f);
        }
    }

    /// Under "same" padding, the outputs [begin, end) of a plane that row (ky, kx) of A^T ties
    /// to the input: the first and one past the last whose (y, x) lie inside it (empty when
    /// none does). Output i meets input element i + offset of the same plane; between begin
    /// and end that is in the plane for every i, inside or not.
    struct PlaneSpan {
        std::size_t begin = 0, end = 0;
        std::ptrdiff_t offset = 0;
    };
    [[nodiscard]] PlaneSpan plane_span(int ky, int kx) const {
        const int oy_first = std::max(0, m_padding - ky), oy_last = std::min(m_out_height, m_height + m_padding - ky);
        const int ox_first = std::max(0, m_padding - kx), ox_last = std::min(m_out_width, m_width + m_padding - kx);
        if (oy_last <= oy_first || ox_last <= ox_first) return {};
        const auto width = static_cast<std::size_t>(m_width);
        return {static_cast<std::size_t>(oy_first) * width + static_cast<std::size_t>(ox_first),
                static_cast<std::size_t>(oy_last - 1) * width + static_cast<std::size_t>(ox_last),
                static_cast<std::ptrdiff_t>(ky - m_padding) * m_width + (kx - m_padding)};
    }

    /// Row (c, ky, kx) of A^T (column of A).
    [[nodiscard]] std::size_t kernel_row(int c, int ky, int kx) const {
        const auto k = static_cast<std::size_t>(m_kernel);
        return (static_cast<std::size_t>(c) * k + static_cast<std::size_t>(ky)) * k + static_cast<std::size_t>(kx);
    }

    /// Adds col2im(dA^T) of images first .. first + images - 1 to grad_in (zeroed before the
    /// first slice), dA^T's slice in m_dcols (C k k x images * pixels). Each input element sums
    /// its contributions in the order of A's rows (b, oy, ox), that is (ky, kx) descending, as a
    /// row-by-row col2im would.
    void col2im(Activation& grad_in, std::size_t first, std::size_t images) const {
        const std::size_t rows = images * pixels_out();
        if (m_out_width == m_width) return col2im_planes(grad_in, first, images);
        for (int c = 0; c < m_channels; ++c)
            for (int ky = m_kernel; ky-- > 0;)
                for (int kx = m_kernel; kx-- > 0;) {
                    const std::size_t r = kernel_row(c, ky, kx);
                    const float* in_row = m_dcols.data() + r * rows;
                    for_each_inside_run(first, first + images, c, ky, kx,
                                        [&](std::size_t b, int ch, int y, int oy, int x, int ox, int n) {
                                            float* to = &grad_in.data[input_index(b, ch, y, x)];
                                            const float* from = in_row + column_index(b - first, oy, ox);
                                            for (int i = 0; i < n; ++i) to[i] += from[i];
                                        });
                }
    }

    /// col2im when output and input rows are equally wide: then row (c, ky, kx) of dA^T
    /// adds each image's output plane to input plane (b, c) at one flat offset,
    /// (ky - p) W + (kx - p), so the add runs over the whole plane at once, and the outputs
    /// whose x falls outside the input (m_inside[kx] is 0) add +0 to the element they land on.
    /// That changes no element: each starts at +0 and a sum is -0 only when both terms are, so
    /// none is ever -0, and x + 0 = x for every other x. For each input element the (ky, kx)
    /// stay in descending order, as in col2im.
    void col2im_planes(Activation& grad_in, std::size_t first, std::size_t images) const {
        const std::size_t pixels = pixels_out(), rows = images * pixels;
        for (std::size_t b = first; b < first + images; ++b)
            for (int c = 0; c < m_channels; ++c) {
                float* __restrict plane = &grad_in.data[input_index(b, c, 0, 0)];
                for (int ky = m_kernel; ky-- > 0;)
                    for (int kx = m_kernel; kx-- > 0;) {
                        const PlaneSpan span = plane_span(ky, kx);
                        const float* __restrict from =
                            m_dcols.data() + kernel_row(c, ky, kx) * rows + (b - first) * pixels;
                        const std::uint32_t* __restrict inside = &m_inside[static_cast<std::size_t>(kx) * pixels];
                        float* __restrict to = plane + span.offset;
                        for (std::size_t i = span.begin; i < span.end; ++i) {
                            const float value = from[i];  // read unconditionally: the loop vectorises
                            to[i] += inside[i] != 0 ? value : 0.0f;
                        }
                    }
            }
    }

    /// m_inside[kx * pixels + (oy W + ox)] = 1 if column ox + kx - p lies inside the input.
    void build_inside() {
        const std::size_t pixels = pixels_out();
        m_inside.assign(static_cast<std::size_t>(m_kernel) * pixels, 0);
        for (int kx = 0; kx < m_kernel; ++kx)
            for (std::size_t i = 0; i < pixels; ++i) {
                const int x = static_cast<int>(i % static_cast<std::size_t>(m_out_width)) + kx - m_padding;
                m_inside[static_cast<std::size_t>(kx) * pixels + i] = x >= 0 && x < m_width ? 1u : 0u;
            }
    }

    /// d loss / d bias_f: the sum over (b, oy, ox) in that order, eight filters at a time.
    void bias_gradient(const Activation& grad_out, std::size_t batch) {
        const std::size_t pixels = pixels_out();
        std::vector<float>& sums = m_params.bias_grad;
        std::fill(sums.begin(), sums.end(), 0.0f);
        constexpr std::size_t kChains = 8;
        for (std::size_t b = 0; b < batch; ++b) {
            const float* plane = &grad_out.data[b * m_out * pixels];
            std::size_t f = 0;
            for (; f + kChains <= m_out; f += kChains) {
                float s[kChains];
                for (std::size_t j = 0; j < kChains; ++j) s[j] = sums[f + j];
                for (std::size_t p = 0; p < pixels; ++p)
                    for (std::size_t j = 0; j < kChains; ++j) s[j] += plane[(f + j) * pixels + p];
                for (std::size_t j = 0; j < kChains; ++j) sums[f + j] = s[j];
            }
            for (; f < m_out; ++f)
                for (std::size_t p = 0; p < pixels; ++p) sums[f] += plane[f * pixels + p];
        }
    }

    std::string m_name;
    int m_channels, m_height, m_width, m_kernel, m_padding, m_out_height, m_out_width;
    std::vector<float> m_padded, m_y, m_g, m_g_slice, m_dcols;
    std::vector<std::uint32_t> m_inside;  ///< see build_inside
};

class Relu final : public Layer {
public:
    void forward(const Activation& in, Activation& out, GemmContext&) override {
        out.reshape(in.batch, in.channels, in.height, in.width);
        const float* __restrict x = in.data.data();
        float* __restrict y = out.data.data();
        for (std::size_t i = 0, n = in.data.size(); i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext&) override {
        grad_in->reshape(in.batch, in.channels, in.height, in.width);
        const float* __restrict x = in.data.data();
        const float* __restrict dy = grad_out.data.data();
        float* __restrict dx = grad_in->data.data();
        for (std::size_t i = 0, n = in.data.size(); i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
    }
};

/// ReLU followed by 2 x 2 max pooling with stride 2 (even input sizes), fused so that the
/// ReLU's output never exists: the result, bit for bit, of the two layers in sequence. The
/// pool's winner is the first maximum of the ReLU outputs in row-major window order; the
/// whole gradient goes to it, and through the ReLU only if its input was positive.
class ReluMaxPool2 final : public Layer {
public:
    void forward(const Activation& in, Activation& out, GemmContext&) override {
        if (in.height < 2 || in.width < 2 || in.height % 2 != 0 || in.width % 2 != 0)
            throw std::logic_error("2 x 2 max pooling needs even input sizes, got " + std::to_string(in.height) +
                                   " x " + std::to_string(in.width));
        const int oh = in.height / 2, ow = in.width / 2;
        out.reshape(in.batch, in.channels, oh, ow);
        m_winner.resize(out.data.size());
        const auto width = static_cast<std::size_t>(in.width), outputs = static_cast<std::size_t>(ow);
        const std::size_t row_pairs = in.batch * static_cast<std::size_t>(in.channels * oh);
        for (std::size_t pair = 0; pair < row_pairs; ++pair) {
            const float* top = in.data.data() + 2 * pair * width;
            const float* bottom = top + width;
            float* y = out.data.data() + pair * outputs;
            std::uint8_t* winner = m_winner.data() + pair * outputs;
#ifdef __SSE2__
            if (outputs >= 4) {
                for_each_block_of_four(
                    outputs, [&](std::size_t j) { forward_four(top + 2 * j, bottom + 2 * j, y + j, winner + j); });
                continue;
            }
#endif
            for (std::size_t j = 0; j < outputs; ++j) {
                // The first maximum is the first element equal to it, at the count of leading
                // unequal elements.
                const float r0 = relu(top[2 * j]), r1 = relu(top[2 * j + 1]), r2 = relu(bottom[2 * j]),
                            r3 = relu(bottom[2 * j + 1]);
                const float best = std::max(std::max(r0, r1), std::max(r2, r3));
                const unsigned before1 = r0 != best, before2 = before1 & (r1 != best), before3 = before2 & (r2 != best);
                y[j] = best;
                // best > 0 iff the winner's input was > 0; else every r is 0, the winner is 0, and
                // no gradient passes.
                winner[j] = static_cast<std::uint8_t>(before1 + before2 + before3 + (best > 0.0f ? kPasses : 0u));
            }
        }
    }
    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext&) override {
        grad_in->reshape(in.batch, in.channels, in.height, in.width);
        const auto width = static_cast<std::size_t>(in.width), outputs = width / 2;
        const std::size_t row_pairs = grad_out.data.size() / std::max<std::size_t>(1, outputs);
        for (std::size_t pair = 0; pair < row_pairs; ++pair) {
            float* __restrict top = grad_in->data.data() + 2 * pair * width;
            float* __restrict bottom = top + width;
            const float* __restrict dy = grad_out.data.data() + pair * outputs;
            const std::uint8_t* __restrict winner = m_winner.data() + pair * outputs;
            // Every input gradient is written: the window's winner gets the output's gradient if
            // it passes (+ 0: a -0 gradient arrives as +0, as a sum into zeros would), the other
            // three +0.
#ifdef __SSE2__
            if (outputs >= 4) {
                for_each_block_of_four(
                    outputs, [&](std::size_t j) { backward_four(dy + j, winner + j, top + 2 * j, bottom + 2 * j); });
                continue;
            }
#endif
            for (std::size_t j = 0; j < outputs; ++j) {
                const unsigned w = winner[j], at = w & 3u;
                const float g = w >= kPasses ? 0.0f + dy[j] : 0.0f;
                top[2 * j] = at == 0 ? g : 0.0f;
                top[2 * j + 1] = at == 1 ? g : 0.0f;
                bottom[2 * j] = at == 2 ? g : 0.0f;
                bottom[2 * j + 1] = at == 3 ? g : 0.0f;
            }
        }
    }

private:
    /// ReLU's output, v > 0 ? v : +0 (NaN and -0 give +0).
    static float relu(float v) { return v > 0.0f ? v : 0.0f; }

#ifdef __SSE2__
    /// Calls block(j) for blocks of four windows j .. j + 3 covering a row of `outputs` >= 4
    /// windows; when 4 does not divide `outputs`, the last block overlaps the one before (those
    /// windows are computed twice, the same both times).
    template <typename Block>
    static void for_each_block_of_four(std::size_t outputs, Block&& block) {
        for (std::size_t j = 0;; j += 4) {
            j = std::min(j, outputs - 4);
            block(j);
            if (j + 4 == outputs) return;
        }
    }

    /// Four windows: `top` and `bottom` hold their 8 inputs of each row, y and winner their outputs.
    static void forward_four(const float* top, const float* bottom, float* y, std::uint8_t* winner) {
        const __m128 zero = _mm_setzero_ps();
        const auto relu4 = [&](__m128 v) { return _mm_and_ps(v, _mm_cmpgt_ps(v, zero)); };
        const __m128 t0 = _mm_loadu_ps(top), t1 = _mm_loadu_ps(top + 4);
        const __m128 b0 = _mm_loadu_ps(bottom), b1 = _mm_loadu_ps(bottom + 4);
        const __m128 r0 = relu4(_mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)));  // each window's top left
        const __m128 r1 = relu4(_mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1)));
        const __m128 r2 = relu4(_mm_shuffle_ps(b0, b1, _MM_SHUFFLE(2, 0, 2, 0)));
        const __m128 r3 = relu4(_mm_shuffle_ps(b0, b1, _MM_SHUFFLE(3, 1, 3, 1)));
        const __m128 best = _mm_max_ps(_mm_max_ps(r0, r1), _mm_max_ps(r2, r3));  // no NaN after ReLU
        const __m128i before1 = _mm_castps_si128(_mm_cmpneq_ps(r0, best));       // all ones = 1 before
        const __m128i before2 = _mm_and_si128(before1, _mm_castps_si128(_mm_cmpneq_ps(r1, best)));
        const __m128i before3 = _mm_and_si128(before2, _mm_castps_si128(_mm_cmpneq_ps(r2, best)));
        const __m128i at = _mm_sub_epi32(_mm_setzero_si128(), _mm_add_epi32(_mm_add_epi32(before1, before2), before3));
        const __m128i passes =
            _mm_and_si128(_mm_castps_si128(_mm_cmpgt_ps(best, zero)), _mm_set1_epi32(static_cast<int>(kPasses)));
        const __m128i words = _mm_add_epi32(at, passes);
        const std::int32_t packed = _mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(words, words), words));
        _mm_storeu_ps(y, best);
        std::memcpy(winner, &packed, sizeof packed);
    }

    /// Four windows' input gradients, 8 floats of each row into `top` and `bottom`, from their
    /// output gradients dy and winners.
    static void backward_four(const float* dy, const std::uint8_t* winner, float* top, float* bottom) {
        std::int32_t packed;
        std::memcpy(&packed, winner, sizeof packed);
        const __m128i zero = _mm_setzero_si128();
        const __m128i w = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(packed), zero), zero);
        const __m128i passes = _mm_cmpgt_epi32(w, _mm_set1_epi32(static_cast<int>(kPasses) - 1));
        const __m128 g = _mm_and_ps(_mm_add_ps(_mm_setzero_ps(), _mm_loadu_ps(dy)), _mm_castsi128_ps(passes));
        const __m128i at = _mm_and_si128(w, _mm_set1_epi32(3));
        const auto to = [&](int position) {
            return _mm_and_ps(g, _mm_castsi128_ps(_mm_cmpeq_epi32(at, _mm_set1_epi32(position))));
        };
        const __m128 v0 = to(0), v1 = to(1), v2 = to(2), v3 = to(3);
        _mm_storeu_ps(top, _mm_unpacklo_ps(v0, v1));
        _mm_storeu_ps(top + 4, _mm_unpackhi_ps(v0, v1));
        _mm_storeu_ps(bottom, _mm_unpacklo_ps(v2, v3));
        _mm_storeu_ps(bottom + 4, _mm_unpackhi_ps(v2, v3));
    }
#endif

    static constexpr unsigned kPasses = 4;  ///< added to a winner whose window's maximum ReLU output is > 0
    /// Per output: its window's first maximum in row-major order (0 top left .. 3 bottom right;
    /// 0 when every ReLU output is 0), + kPasses if the gradient passes to it.
    std::vector<std::uint8_t> m_winner;
};

}  // namespace

Network::Network(NetworkKind kind, std::uint64_t seed) : m_kind(kind) {
    std::mt19937_64 rng(seed);
    if (kind == NetworkKind::mlp) {
        m_layers.push_back(std::make_unique<Dense>("fc1", 0, 784, 256, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc2", 1, 256, 128, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc3", 2, 128, kClasses, rng));
        m_gemm_layers = 3;
    } else {
        m_layers.push_back(std::make_unique<Conv2d>("conv1", 0, 1, 28, 28, 16, 3, 1, rng));
        m_layers.push_back(std::make_unique<ReluMaxPool2>());
        m_layers.push_back(std::make_unique<Conv2d>("conv2", 1, 16, 14, 14, 32, 3, 1, rng));
        m_layers.push_back(std::make_unique<ReluMaxPool2>());
        m_layers.push_back(std::make_unique<Dense>("fc1", 2, 32 * 7 * 7, 128, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc2", 3, 128, kClasses, rng));
        m_gemm_layers = 4;
    }
    m_outputs.resize(m_layers.size());
    m_grads.resize(m_layers.size());
}

const Activation& Network::forward(const Activation& input, GemmContext& ctx) {
    m_input = &input;
    const Activation* in = &input;
    for (std::size_t i = 0; i < m_layers.size(); ++i) {
        m_layers[i]->forward(*in, m_outputs[i], ctx);
        in = &m_outputs[i];
    }
    return m_outputs.back();
}

void Network::backward(const Activation& grad_logits, GemmContext& ctx) {
    const Activation* grad = &grad_logits;
    for (std::size_t i = m_layers.size(); i-- > 0;) {
        const Activation& in = i == 0 ? *m_input : m_outputs[i - 1];
        Activation* grad_in = i == 0 ? nullptr : &m_grads[i - 1];
        m_layers[i]->backward(in, m_outputs[i], *grad, grad_in, ctx);
        grad = grad_in;
    }
}

std::unique_ptr<Layer> make_relu_max_pool2() { return std::make_unique<ReluMaxPool2>(); }
std::unique_ptr<Layer> make_relu() { return std::make_unique<Relu>(); }

std::unique_ptr<Layer> make_conv2d(std::size_t index, int channels, int height, int width, int filters, int kernel,
                                   int padding, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    return std::make_unique<Conv2d>("conv", index, channels, height, width, filters, kernel, padding, rng);
}

std::vector<GemmLayerShape> Network::gemm_shapes() const {
    std::vector<GemmLayerShape> shapes;
    for (const auto& layer : m_layers)
        if (auto s = layer->gemm_shape()) shapes.push_back(*s);
    return shapes;
}

std::vector<Parameters*> Network::parameters() {
    std::vector<Parameters*> out;
    for (auto& layer : m_layers)
        if (Parameters* p = layer->parameters()) out.push_back(p);
    return out;
}

LossResult softmax_cross_entropy(const Activation& logits, const std::uint8_t* labels, Activation& grad_logits) {
    const std::size_t classes = logits.features();
    grad_logits.reshape(logits.batch, logits.channels, logits.height, logits.width);
    LossResult result;
    const float inv_batch = 1.0f / static_cast<float>(logits.batch);
    for (std::size_t b = 0; b < logits.batch; ++b) {
        const float* z = &logits.data[b * classes];
        float* g = &grad_logits.data[b * classes];
        const std::size_t predicted = static_cast<std::size_t>(std::max_element(z, z + classes) - z);
        if (predicted == labels[b]) ++result.correct;
        const float top = z[predicted];
        double total = 0;
        for (std::size_t j = 0; j < classes; ++j) total += std::exp(static_cast<double>(z[j] - top));
        const double log_total = std::log(total);
        result.loss += log_total - static_cast<double>(z[labels[b]] - top);
        for (std::size_t j = 0; j < classes; ++j) {
            const double p = std::exp(static_cast<double>(z[j] - top) - log_total);
            g[j] = static_cast<float>(p - (j == labels[b] ? 1.0 : 0.0)) * inv_batch;
        }
    }
    result.loss /= static_cast<double>(logits.batch);
    return result;
}

}  // namespace fastsim::learning
