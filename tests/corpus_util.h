// Reading the shared corpus manifests (test-only helper).
#ifndef HLOGYM_TESTS_CORPUS_UTIL_H_
#define HLOGYM_TESTS_CORPUS_UTIL_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hlogym {

struct CorpusEntry {
  std::string file;  // as listed in MANIFEST.tsv
  std::string path;  // full path
  bool expect_error = false;
};

// The shared folder: $HLOGYM_SHARED_DIR, else <source>/../shared. Empty if
// it does not exist (a clone without it skips the corpus tests).
inline std::string SharedDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* env = std::getenv("HLOGYM_SHARED_DIR")) {
    if (fs::is_directory(env, ec)) return env;
  }
  fs::path p = fs::path(HLOGYM_SOURCE_DIR) / ".." / "shared";
  if (fs::is_directory(p / "corpus", ec)) return p.lexically_normal().string();
  return "";
}

// Entries of corpus/<folder>/MANIFEST.tsv.
inline std::vector<CorpusEntry> LoadManifest(const std::string& shared,
                                             const std::string& folder) {
  std::vector<CorpusEntry> entries;
  const std::string dir = shared + "/corpus/" + folder;
  std::ifstream in(dir + "/MANIFEST.tsv");
  std::string line;
  int file_col = -1, error_col = -1;
  bool header = true;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (header) {
      for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i] == "file") file_col = static_cast<int>(i);
        if (cols[i] == "expect_error") error_col = static_cast<int>(i);
      }
      header = false;
      continue;
    }
    if (file_col < 0 || static_cast<int>(cols.size()) <= file_col) continue;
    CorpusEntry e;
    e.file = cols[file_col];
    e.path = dir + "/" + e.file;
    e.expect_error = error_col >= 0 &&
                     static_cast<int>(cols.size()) > error_col &&
                     cols[error_col] == "1";
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace hlogym

#endif  // HLOGYM_TESTS_CORPUS_UTIL_H_
