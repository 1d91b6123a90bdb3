// Pictures through established tools: the training curves drawn by gnuplot
// from their CSV file.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace example {

// Whether `path` starts with PNG's signature.
inline bool is_png(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[8] = {};
  f.read(head, 8);
  return f && std::string(head, 8) == "\x89PNG\r\n\x1a\n";
}

inline bool have_gnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

// Writes dir/curves.gp, a gnuplot script drawing the loss and accuracy of
// each epoch in `csv` (epoch, train loss and accuracy, validation loss and
// accuracy) into dir/curves.png, and runs it where gnuplot is installed.
// Returns whether the PNG was drawn.
inline bool plot_curves(const std::string& dir, const std::string& csv) {
  const std::string script = dir + "/curves.gp";
  std::ofstream gp(script);
  // noenhanced: the CSV's column names hold underscores, not subscripts.
  gp << "set terminal png size 1000,420 noenhanced\n"
     << "set output '" << dir << "/curves.png'\n"
     << "set datafile separator ','\n"
     << "set key autotitle columnhead\n"
     << "set xlabel 'epoch'\n"
     << "set grid\n"
     << "set multiplot layout 1,2\n"
     << "set title 'cross-entropy'\n"
     << "plot '" << csv << "' using 1:2 with linespoints, '' using 1:4 with linespoints\n"
     << "set title 'accuracy'\n"
     << "set key bottom right\n"
     << "plot '" << csv << "' using 1:3 with linespoints, '' using 1:5 with linespoints\n"
     << "unset multiplot\n";
  gp.close();
  if (!have_gnuplot()) return false;
  return std::system(("gnuplot '" + script + "'").c_str()) == 0 && is_png(dir + "/curves.png");
}

}  // namespace example
