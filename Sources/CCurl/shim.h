#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
// libcurl (Debian's libcurl4-openssl-dev): the HTTP transport of the WebDAV and S3 remotes.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: these
// wrappers give each argument type a function of its own.
#include <curl/curl.h>

static inline CURLcode dk_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode dk_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode dk_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode dk_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode dk_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*dk_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*dk_curl_progress_callback)(
    void *context, curl_off_t downloadTotal, curl_off_t downloaded, curl_off_t uploadTotal,
    curl_off_t uploaded);
typedef int (*dk_curl_seek_callback)(void *context, curl_off_t offset, int origin);

static inline CURLcode dk_curl_setopt_data_callback(
    CURL *handle, CURLoption option, dk_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode dk_curl_setopt_progress_callback(CURL *handle, dk_curl_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode dk_curl_setopt_seek_callback(CURL *handle, dk_curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

static inline long dk_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

#endif
