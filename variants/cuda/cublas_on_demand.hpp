// cuBLAS is loaded on first use (cublas_on_demand.cpp says why): whether it can be, and if not, why not.
#pragma once

#include <string>

namespace lobench::cuda {

// Loads libcublas if it is not loaded yet; true where it could be (a GPU is not needed for that).
bool cublas_loadable();
// The loader's message where cublas_loadable() is false, empty otherwise.
const std::string& cublas_load_error();

}  // namespace lobench::cuda
