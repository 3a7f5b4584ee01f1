// A minimal std::span stand-in: the Debian ns-3.37 headers do not compile as
// C++20 (Singleton<T>() constructors), so the project builds as C++17.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace inasim {

template <typename T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  template <typename A, typename = std::enable_if_t<std::is_const_v<T> || !std::is_const_v<A>>>
  Span(std::vector<A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit like std::span
  template <typename A>
  Span(const std::vector<A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr Span(std::array<value_type, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  template <size_t N>
  constexpr Span(const std::array<value_type, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  template <size_t N>
  constexpr Span(T (&a)[N]) : data_(a), size_(N) {}  // NOLINT
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  constexpr Span(const Span<U>& o) : data_(o.data()), size_(o.size()) {}  // NOLINT

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  constexpr T& front() const { return data_[0]; }
  constexpr T& back() const { return data_[size_ - 1]; }
  constexpr Span subspan(size_t offset, size_t count) const { return Span(data_ + offset, count); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace inasim
