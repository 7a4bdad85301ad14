# Apache Arrow and Parquet for per-sample data (rollouts, eval outputs), taken from the pyarrow wheel: it ships the
# C++ headers and libraries, Debian ships neither, and the rldk Python package needs pyarrow anyway. The libraries
# are linked by full path (the wheel has only versioned names such as libarrow.so.2500) and found at run time
# through RPATH: the build tree uses the wheel's folder; installed files look beside themselves in site-packages.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c
          "import pyarrow as pa; print(pa.get_include()); print(pa.get_library_dirs()[0]); print(pa.cpp_build_info.so_version)"
  OUTPUT_VARIABLE RLDK_PYARROW_INFO OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE RLDK_PYARROW_FOUND)
if(NOT RLDK_PYARROW_FOUND EQUAL 0)
  message(FATAL_ERROR "pyarrow is needed for Parquet support: pip install pyarrow (scripts/setup.sh does) "
                      "and configure with -DPython3_EXECUTABLE=<the venv's python>")
endif()
string(REPLACE "\n" ";" RLDK_PYARROW_INFO "${RLDK_PYARROW_INFO}")
list(GET RLDK_PYARROW_INFO 0 RLDK_ARROW_INCLUDE)
list(GET RLDK_PYARROW_INFO 1 RLDK_ARROW_LIBDIR)
list(GET RLDK_PYARROW_INFO 2 RLDK_ARROW_SO)
foreach(lib arrow parquet)
  add_library(rldk_${lib} SHARED IMPORTED)
  set_target_properties(rldk_${lib} PROPERTIES
    IMPORTED_LOCATION ${RLDK_ARROW_LIBDIR}/lib${lib}.so.${RLDK_ARROW_SO}
    IMPORTED_NO_SONAME FALSE
    INTERFACE_INCLUDE_DIRECTORIES ${RLDK_ARROW_INCLUDE})
endforeach()
message(STATUS "Arrow/Parquet ${RLDK_ARROW_SO} from ${RLDK_ARROW_LIBDIR}")

# libparquet carries its own copy of OpenSSL and exports its symbols. Loaded ahead of the system's libssl and
# libcrypto (which libcurl brings in for webhooks), it would capture their calls into themselves, and the first
# TLS or hash call (Python's `import hashlib` after `import rldk`) crashes. Linking the system OpenSSL directly and
# before Arrow puts it first in every lookup order, so each OpenSSL binds to itself.
find_package(OpenSSL REQUIRED)
# --no-as-needed keeps them although rldk calls none of their functions itself.
set(RLDK_ARROW_LIBRARIES "-Wl,--push-state,--no-as-needed" OpenSSL::SSL OpenSSL::Crypto "-Wl,--pop-state"
    rldk_arrow rldk_parquet)
