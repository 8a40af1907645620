#include "fake.h"

int
fake_c(int n)
{
	return n > 0 ? fake_a(n - 1) : 0;
}
