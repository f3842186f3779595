
// Accesses of every data xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxmodule {x
  m