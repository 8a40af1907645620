#include "fake.h"

int
fake_d(int n)
{
	return fake_e(n) + fake_main_only();
}
