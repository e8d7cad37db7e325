import Symmetry
