// SPDX-License-Identifier: GPL-2.0
/* Executes icount.c's marker once: the plugin writes its counts. */
int main(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0xa1, 0xe6, 0x0c, 0x5e");
	return 0;
}
