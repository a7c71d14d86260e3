#pragma once
#include "../../CMicroHTTPD/CMicroHTTPD.h"
