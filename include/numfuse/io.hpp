// Arrays to and from files in numpy's .npy format, so that weights saved here
// open with numpy.load and arrays numpy saved open here; and arrays from IDX
// files, the format of MNIST and Fashion-MNIST.
#pragma once

#include <map>
#include <string>

#include "numfuse/array.hpp"
#include "numfuse/device.hpp"

namespace nf {

// Writes `a` (any layout, any device) to `path` as a C-order .npy file
// (format 1.0, or 2.0 where the header needs it). bf16, which numpy has no
// code for, is written as 2-byte void ('<V2'), as numpy.save writes
// ml_dtypes.bfloat16; numpy reads it back with .view(ml_dtypes.bfloat16).
// Throws IOError where the file cannot be written.
void save(const std::string& path, const Array& a);

// Reads a .npy file (format 1.0 to 3.0, C or Fortran order) into a new array
// on `device`. Little-endian or byte-sized dtypes numfuse has: '<f2' '<f4'
// '<f8' '<i4' '<i8' '|u1' '|b1', and '<V2' as bf16. Throws IOError naming
// the file and what is wrong where it is missing, truncated, not .npy, or
// holds a dtype numfuse has not.
Array load(const std::string& path, Device device = default_device());

// Several arrays at once, without numpy's zip archive (.npz): each to
// dir/NAME.npy as save writes it, the directory made where it is missing,
// so that numpy.load reads each. Names are letters, digits, '_', '-' and
// '.' (not leading); another is a ValueError, and nothing is written.
void save_dir(const std::string& dir, const std::map<std::string, Array>& arrays);
// Every dir/NAME.npy, by NAME, as load reads them. Throws IOError where the
// directory is missing or a file is not what load reads.
std::map<std::string, Array> load_dir(const std::string& dir, Device device = default_device());

// Reads an IDX file, gzipped (.gz) or not, into a new array of the file's
// shape on `device`. IDX type codes become numfuse dtypes: 0x08 (unsigned
// byte) u8, 0x0C (int) i32, 0x0D (float) f32, 0x0E (double) f64; numfuse has
// no i8 or i16, so 0x09 (signed byte) and 0x0B (short) widen to i32. Throws
// IOError naming the file and what is wrong where it is missing, truncated
// (the bytes expected and found), has no IDX magic or an unknown type code.
Array load_idx(const std::string& path, Device device = default_device());

}  // namespace nf
