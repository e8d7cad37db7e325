import Locus
