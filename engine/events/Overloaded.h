#pragma once
// The usual visitor of several lambdas for std::visit over an event or line variant.

namespace hearth {

template <class... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace hearth
