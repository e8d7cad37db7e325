#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian's libssl-dev): the EVP digest interface, which picks the
// hardware SHA extensions or the best vector code the CPU has at run time.
#include <openssl/evp.h>
#endif
