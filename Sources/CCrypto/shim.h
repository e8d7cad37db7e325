#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian's libssl-dev): the EVP digest interface, which picks the
// hardware SHA extensions or the best vector code the CPU has at run time, HMAC for the
// S3 remote's request signatures (AWS Signature Version 4), and the PEM reader that checks a
// remote's certificate authority file (--ca-file) holds certificates.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#endif
