# Included by CMake right after llama.cpp's project() (tests/server_envs.py, LLAMA's CMAKE_ARGS):
# llama.cpp's common library is not built, since llama-cpp-python loads only libllama and
# libggml. A variable in this directory scope is what llama.cpp's `if (LLAMA_BUILD_COMMON)`
# reads; the package's CMakeLists forces the cache entry on, where a -D cannot reach.
set(LLAMA_BUILD_COMMON OFF)
