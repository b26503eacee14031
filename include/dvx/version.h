/* SPDX-License-Identifier: MIT */
/*
 * dvx/version.h - the version of these headers and of the library built from them:
 * the one place it is written (dvx.pc and the tools' --version take it from here).
 */
#ifndef DVX_VERSION_H
#define DVX_VERSION_H

#define DVX_VERSION_MAJOR 0
#define DVX_VERSION_MINOR 1
#define DVX_VERSION_PATCH 0
#define DVX_VERSION "0.1.0"

#endif /* DVX_VERSION_H */
