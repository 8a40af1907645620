/* high: calls fake_f of low without including low's header, so that
 * its only arrow to low is the call (an upward call when high < low) */
#include "g.h"

int	fake_f(int);

int
fake_g(int n)
{
	return fake_f(n) * 2;
}
