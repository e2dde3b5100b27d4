#include "hlogym/text/printer.h"
