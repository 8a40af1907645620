#include "fake.h"

int
fake_main_only(void)
{
	return 3;
}

int
main(void)
{
	return fake_d(0) == 4 ? 0 : 1;
}
