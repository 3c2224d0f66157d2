#pragma once
// The FLOPs of the built-in models as MFU counts them (the "model FLOPs" of the PaLM paper's
// appendix B): the matrix products and convolutions of one forward pass, a multiply-add counted as
// 2; a training step is three forward passes' worth (the backward computes the gradients of both
// inputs and weights: twice the forward), whatever activation checkpointing recomputes. Layer
// norms, activations, pooling, softmax and embedding lookups are left out. No LibTorch.

#include "engine/models/TransformerSpec.h"

#include <cstdint>
#include <vector>

namespace hearth {

struct ForwardFlops {
    double per_sample = 0.0;          // whatever the sequence length
    double per_token = 0.0;           // times the tokens of a sample (a transformer's linear layers)
    double per_token_squared = 0.0;   // times their square (attention's scores and weighted sum)

    bool known() const { return per_sample > 0.0 || per_token > 0.0; }
    // One forward pass over `samples` samples of `tokens` tokens each (tokens: 0 for non-text).
    double forward(int64_t samples, int64_t tokens = 0) const;
    // A training step over them: 3 x forward.
    double training(int64_t samples, int64_t tokens = 0) const { return 3.0 * forward(samples, tokens); }
    ForwardFlops& operator+=(const ForwardFlops& o);
};

// A model's forward FLOPs by part, in the order its forward runs them: the stem before the first
// block (ResNet's first convolution; the embeddings' lookups count none), each block of
// ClassifierImpl::blockParameters(), the head. The model's count is their sum; the pipeline cuts
// stages of equal FLOPs from the parts.
struct PartFlops {
    ForwardFlops stem;
    std::vector<ForwardFlops> blocks;
    ForwardFlops head;

    ForwardFlops total() const;
};

// Flatten -> a Linear per hidden width (a block each) -> Linear head.
PartFlops mlpFlops(int64_t in_features, const std::vector<int64_t>& hidden, int64_t classes);
// Per block two 3x3 convolutions at the block's resolution (padding 1), halved after each block;
// then the Linear head. sample_shape: [C, H, W].
PartFlops cnnFlops(const std::vector<int64_t>& sample_shape, const std::vector<int64_t>& channels, int64_t classes);
// Per token and layer (a block each): the Q, K, V and output projections (4 d^2) and the
// feed-forward (2 d f), times 2; attention's QK^T and weights x V: 4 T d per token and layer. The
// head reads the first token: pre_classifier or pooler (d^2) and the classifier (d x labels), per
// sample.
PartFlops transformerFlops(const TransformerSpec& spec);

}  // namespace hearth
