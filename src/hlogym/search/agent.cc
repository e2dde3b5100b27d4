#include "hlogym/search/agent.h"
