#include "fake.h"

int
fake_a(int n)
{
	return n > 0 ? fake_b(n - 1) : 0;
}
