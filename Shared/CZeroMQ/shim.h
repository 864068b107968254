#ifndef RECIPEVAULT_CZEROMQ_SHIM_H
#define RECIPEVAULT_CZEROMQ_SHIM_H

#include <zmq.h>
#include <errno.h>

#endif
