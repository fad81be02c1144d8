#pragma once
// FUSETUNE_FILE: the file name the checking macros (FT_CU_CALL, FT_NVRTC_CALL, FT_CUDNN_CALL,
// FT_SQLITE_CALL) put in their errors: "module.cpp", not the build machine's absolute path.
#if defined(__FILE_NAME__)
#define FUSETUNE_FILE __FILE_NAME__
#else
#define FUSETUNE_FILE __FILE__
#endif
