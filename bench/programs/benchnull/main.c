/* benchnull: a program that does nothing (process_spawn_exit). */
int main(void *info)
{
    return 0;
}
