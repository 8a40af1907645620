#include "fake.h"

int
fake_e(int n)
{
	return n + 1;
}
