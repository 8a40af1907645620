/* low: includes a header of high, the folder above it (an upward
 * include when low < high) */
#include "f.h"
#include "../high/g.h"

int
fake_f(int n)
{
	return n + FAKE_G_STEP;
}
