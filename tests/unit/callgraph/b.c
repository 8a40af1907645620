#include "fake.h"

int
fake_b(int n)
{
	return n > 0 ? fake_c(n - 1) : 0;
}
